import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { sandboxAvailability } from '../../src/sandbox/sandbox.js'
import { REPO } from '../support/repo.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'

const LAUNCHER = path.join(REPO, 'bin', 'swarm-claude-launcher.js')
const available = await sandboxAvailability(defaultSandboxConfig(), process.env)

/** bin/swarm-claude-launcher.js, Claude Code's CLAUDE_CODE_PROCESS_WRAPPER: its argv runs in swarm's sandbox. */
describe.skipIf(available.status !== 'sandboxed')(`swarm-claude-launcher (${available.reason})`, () => {
  let iso: IsolatedHome
  afterEach(async () => {
    await iso?.cleanup()
  })

  const launch = (script: string, env: NodeJS.ProcessEnv = {}) =>
    spawnSync(LAUNCHER, ['/bin/sh', '-c', script], { cwd: iso.project, env: { ...iso.env, ...env }, encoding: 'utf8' })

  it('writes in its cwd and the config dir, not elsewhere; a lead.key reads empty; the marker is set inside', () => {
    iso = isolatedHome('swarm-launcher-')
    const keyDir = path.join(iso.home, 'teams', 't1')
    fs.mkdirSync(keyDir, { recursive: true })
    fs.writeFileSync(path.join(keyDir, 'lead.key'), 'PRIVATE', { mode: 0o600 })
    // Another teammate's home (its relay token) under the writable config dir: masked all the same.
    const relay = path.join(iso.home, 'agent-homes', 't1', 'g', 'relay')
    fs.mkdirSync(relay, { recursive: true })
    fs.writeFileSync(path.join(relay, 'endpoint.json'), 'TOKEN')
    const outside = path.join(iso.base, 'outside')
    fs.mkdirSync(outside)
    const r = launch(
      `echo in > in.txt; echo cfg > "$SWARM_HOME/cfg.txt"; echo out > ${outside}/out.txt; cat ${keyDir}/lead.key > key.txt; ls "$SWARM_HOME/agent-homes" > homes.txt; echo "$SWARM_CLAUDE_CONFINED"`,
    )
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('1')
    expect(fs.readFileSync(path.join(iso.project, 'in.txt'), 'utf8')).toBe('in\n')
    expect(fs.existsSync(path.join(iso.home, 'cfg.txt'))).toBe(true)
    expect(fs.existsSync(path.join(outside, 'out.txt'))).toBe(false)
    expect(fs.readFileSync(path.join(iso.project, 'key.txt'), 'utf8')).toBe('')
    expect(fs.readFileSync(path.join(iso.project, 'homes.txt'), 'utf8')).toBe('')
  })

  it("a teammate (`--team-name`) sees only its own team's files: inboxes and tasks writable, the key hidden, swarm's records read-only", () => {
    iso = isolatedHome('swarm-launcher-')
    const own = path.join(iso.home, 'teams', 'mine')
    const other = path.join(iso.home, 'teams', 'theirs')
    for (const d of [path.join(own, 'inboxes'), path.join(own, 'permissions'), path.join(other, 'inboxes')]) fs.mkdirSync(d, { recursive: true })
    fs.writeFileSync(path.join(own, 'config.json'), JSON.stringify({ name: 'mine', leadAgentId: 'team-lead@mine', members: [] }))
    fs.writeFileSync(path.join(own, 'lead.key'), 'MINE', { mode: 0o600 })
    fs.writeFileSync(path.join(other, 'lead.key'), 'THEIRS', { mode: 0o600 })
    // The running leader's socket answers as the lead (a file stands in for it): its directory is not there.
    fs.mkdirSync(path.join(own, 'socket'))
    fs.writeFileSync(path.join(own, 'socket', 'leader.sock'), '')
    const t = path.join(iso.home, 'teams')
    // Its own `swarm` shim (in its agent home) runs; another member's home is not there.
    const shim = path.join(iso.home, 'agent-homes', 'mine', 'w', 'bin')
    fs.mkdirSync(shim, { recursive: true })
    fs.writeFileSync(path.join(shim, 'swarm'), '#!/bin/sh\necho shim\n', { mode: 0o700 })
    fs.mkdirSync(path.join(iso.home, 'agent-homes', 'mine', 'g'), { recursive: true })
    const r = spawnSync(
      LAUNCHER,
      [
        '/bin/sh',
        '-c',
        [
          `echo '[]' > ${own}/inboxes/w.json`,
          `mkdir ${iso.home}/tasks/mine/1.lock && echo '{}' > ${iso.home}/tasks/mine/1.json`,
          `cat ${own}/lead.key > key.txt`,
          `ls ${t} > teams.txt`,
          `ls ${own}/socket > socket.txt`,
          `cat ${other}/lead.key > other.txt 2>/dev/null`,
          `echo x > ${other}/inboxes/team-lead.json 2>/dev/null`,
          `echo x > ${own}/permissions/forged.json 2>/dev/null`,
          `${shim}/swarm > shim.txt; ls ${iso.home}/agent-homes/mine > homes.txt; echo x > ${shim}/swarm 2>/dev/null`,
          'exit 0',
        ].join('; '),
        '--team-name',
        'mine',
        '--agent-name',
        'w',
      ],
      { cwd: iso.project, env: iso.env, encoding: 'utf8' },
    )
    expect(r.status, r.stderr).toBe(0)
    expect(fs.readFileSync(path.join(own, 'inboxes', 'w.json'), 'utf8')).toBe('[]\n')
    expect(fs.existsSync(path.join(iso.home, 'tasks', 'mine', '1.json'))).toBe(true)
    expect(fs.readFileSync(path.join(iso.project, 'key.txt'), 'utf8')).toBe('')
    expect(fs.readFileSync(path.join(iso.project, 'teams.txt'), 'utf8')).toBe('mine\n')
    expect(fs.readFileSync(path.join(iso.project, 'socket.txt'), 'utf8')).toBe('')
    expect(fs.readFileSync(path.join(iso.project, 'other.txt'), 'utf8')).toBe('')
    expect(fs.existsSync(path.join(other, 'inboxes', 'team-lead.json'))).toBe(false)
    expect(fs.existsSync(path.join(own, 'permissions', 'forged.json'))).toBe(false)
    expect(fs.readFileSync(path.join(iso.project, 'shim.txt'), 'utf8')).toBe('shim\n')
    expect(fs.readFileSync(path.join(iso.project, 'homes.txt'), 'utf8')).toBe('w\n')
    expect(fs.readFileSync(path.join(shim, 'swarm'), 'utf8')).toContain('echo shim')
  })

  it('inside already (SWARM_CLAUDE_CONFINED=1) it runs the argv as it is; its exit code is the command’s', () => {
    iso = isolatedHome('swarm-launcher-')
    const outside = path.join(iso.base, 'outside')
    fs.mkdirSync(outside)
    const r = launch(`echo out > ${outside}/out.txt; exit 3`, { SWARM_CLAUDE_CONFINED: '1' })
    expect(r.status).toBe(3)
    expect(fs.existsSync(path.join(outside, 'out.txt'))).toBe(true)
    const none = spawnSync(LAUNCHER, [], { env: iso.env, encoding: 'utf8' })
    expect(none.status).toBe(2)
    expect(none.stderr).toContain('no command')
  })
})
