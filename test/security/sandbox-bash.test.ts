import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { afterTest, useLoopback } from '../support/agent-team.js'
import { ALL_MODES, type Attack, type HostileFixture, makeHostileFixture, pathWithoutBwrap, runAttacks } from './sandbox-helpers.js'

/**
 * Finding 4: once Bash is auto-allowed (allow rules, bypassPermissions), the control-plane check
 * is a string check that globs, symlinks, interpreters and variables pass. With the sandbox the
 * kernel decides: the control plane is an empty read-only tmpfs inside, writes land nowhere.
 */

let loopback: LoopbackServer
let fx: HostileFixture
useLoopback((l) => (loopback = l))

/** Rules that make every attack below auto-allowed by rule (on the old main, in default mode too). */
const ALLOW = [
  'Bash(cat:*)',
  'Bash(ln:*)',
  'Bash(node:*)',
  'Bash(H=:*)',
  'Bash(touch:*)',
  'Bash(cp:*)',
  'Bash(mkdir:*)',
  'Bash(umount:*)',
  'Bash(kill:*)',
]

function attacks(fx: HostileFixture): Attack[] {
  const up = path.dirname(fx.home) // the attacker knows the layout, not the exact names
  const globbed = `${up}/ho?e/te*`
  return [
    { id: 'toolu_glob', tool: 'Bash', input: { command: `cat ${globbed}/*/lead.key` } },
    { id: 'toolu_link', tool: 'Bash', input: { command: `ln -s ${globbed} t; cat t/*/lead.key` } },
    {
      id: 'toolu_node',
      tool: 'Bash',
      input: {
        command: `node -e "const fs=require('fs');const d='${up}/'+'home/'+'teams';process.stdout.write(fs.readFileSync(d+'/'+fs.readdirSync('${up}/home/worktrees')[0]+'/lead.key','utf8'))"`,
      },
    },
    { id: 'toolu_var', tool: 'Bash', input: { command: `H=${up}/ho''me; cat $H/tea''ms/*/lead.key` } },
    { id: 'toolu_write', tool: 'Bash', input: { command: `touch ${globbed}/*/pwned` } },
    // As root (CI containers), a command with capabilities could unmount the tmpfs over the control plane.
    { id: 'toolu_umount', tool: 'Bash', input: { command: `umount ${globbed}; cat ${globbed}/*/lead.key` } },
    // The agent runs in this process: visible, a same-uid command could ptrace it and run unsandboxed.
    { id: 'toolu_agent', tool: 'Bash', input: { command: `kill -0 ${process.pid} && echo the agent is visible` } },
    // Protected paths that do not exist yet: no bind mount covers them; created, they are moved aside.
    {
      id: 'toolu_create',
      tool: 'Bash',
      input: {
        command: `mkdir -p .claude .vscode && echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json && echo '{}' > .vscode/tasks.json && echo '{}' > .mcp.json`,
      },
    },
    { id: 'toolu_forge', tool: 'Bash', input: { command: `cp /etc/hostname ${up}/ho?e/ta*/ 2>&1; cp /etc/hostname ${globbed}/*/config.json` } },
  ]
}

async function assertNothingLeaked(fx: HostileFixture, results: Map<string, { outcome: string; result: string }>, before: string): Promise<void> {
  const key = (await fs.readFile(path.join(fx.home, 'teams', 'crew', 'lead.key'), 'utf8')).trim()
  const keyBody = key.split('\n').find((l) => l.length > 40 && !l.startsWith('-----')) ?? key
  for (const [id, r] of results) expect(r.result, id).not.toContain(keyBody)
  await expect(fs.stat(path.join(fx.home, 'teams', 'crew', 'pwned'))).rejects.toThrow()
  for (const created of ['.claude/settings.local.json', '.vscode', '.mcp.json'])
    await expect(fs.stat(path.join(fx.worktree, created)), created).rejects.toThrow()
  expect(await fs.readFile(path.join(fx.home, 'teams', 'crew', 'config.json'), 'utf8')).toBe(before)
}

describe('hostile Bash against the control plane, sandbox on', () => {
  beforeEach(async () => {
    fx = await makeHostileFixture(loopback)
  })

  for (const mode of ALL_MODES) {
    it(`${mode}: every attack is asked or refused, the key never shows, the team files are unchanged`, async () => {
      const list = attacks(fx)
      const before = await fs.readFile(path.join(fx.home, 'teams', 'crew', 'config.json'), 'utf8')
      const results = await runAttacks(loopback, fx, mode, list, ALLOW)
      for (const a of list) expect([a.id, results.get(a.id)!.outcome]).not.toEqual([a.id, 'ran'])
      await assertNothingLeaked(fx, results, before)
    }, 90_000)
  }

  it('the sandbox still lets a command work: writes in the worktree and TMPDIR pass, writes elsewhere fail', async () => {
    const list: Attack[] = [
      { id: 'toolu_ok', tool: 'Bash', input: { command: 'echo ok > out.txt && t=$(mktemp) && echo tmp > "$t" && cat "$t" && echo "$TMPDIR"' } },
      { id: 'toolu_out', tool: 'Bash', input: { command: `echo x > ${fx.base}/outside.txt` } },
    ]
    list.push({ id: 'toolu_bg', tool: 'Bash', input: { command: 'sleep 31.25 & setsid sleep 31.75 & disown; echo left running' } })
    list.push({ id: 'toolu_rc', tool: 'Bash', input: { command: 'echo evil > .bashrc; mkdir -p sub && git init -q sub' } })
    // A private TMPDIR left by an agent that was SIGKILLed (pid 2^22+1 never exists) is swept.
    const ghost = path.join(os.tmpdir(), 'swarm-sandbox-ghost-4194305-AbCdEf')
    await fs.mkdir(ghost, { recursive: true })
    const results = await runAttacks(loopback, fx, 'bypassPermissions', list)
    await expect(fs.stat(ghost)).rejects.toThrow()
    expect(results.get('toolu_bg')).toMatchObject({ outcome: 'ran' })
    // Both died with the sandbox's pid namespace, the setsid one too.
    const alive = (await fs.readdir('/proc')).filter((p) => /^\d+$/.test(p))
    const cmdlines = await Promise.all(alive.map((p) => fs.readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')))
    expect(cmdlines.map((c) => c.split('\0').join(' ')).filter((c) => /sleep 31\.(25|75)/.test(c))).toEqual([])
    expect(results.get('toolu_rc')).toMatchObject({ outcome: 'refused' })
    expect(results.get('toolu_rc')!.result).toContain('moved aside protected paths')
    const left = await fs.readdir(fx.worktree)
    expect(left.filter((n) => n.startsWith('.bashrc'))).toEqual([expect.stringMatching(/^\.bashrc\.blocked-by-swarm-\d+$/)])
    expect((await fs.readdir(path.join(fx.worktree, 'sub'))).filter((n) => n.startsWith('.git'))).toEqual([
      expect.stringMatching(/^\.git\.blocked-by-swarm-/),
    ])
    expect(results.get('toolu_ok')).toMatchObject({ outcome: 'ran' })
    expect(results.get('toolu_ok')!.result).toMatch(/^tmp\n\S*swarm-sandbox-alice-/)
    expect(await fs.readFile(path.join(fx.worktree, 'out.txt'), 'utf8')).toBe('ok\n')
    expect(results.get('toolu_out')).toMatchObject({ outcome: 'refused' })
    expect(results.get('toolu_out')!.result).toContain('Read-only file system')
    await expect(fs.stat(path.join(fx.base, 'outside.txt'))).rejects.toThrow()
  }, 60_000)
})

describe('hostile Bash, bwrap absent (PATH without it)', () => {
  beforeEach(async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-nobwrap-'))
    afterTest(() => fs.rm(base, { recursive: true, force: true }))
    fx = await makeHostileFixture(loopback, { path: pathWithoutBwrap(path.join(base, 'bin')) })
  })

  for (const mode of ALL_MODES) {
    it(`${mode}: every Bash call is asked (denied where the mode cannot ask), whatever the allow rules`, async () => {
      const list = attacks(fx)
      const before = await fs.readFile(path.join(fx.home, 'teams', 'crew', 'config.json'), 'utf8')
      const results = await runAttacks(loopback, fx, mode, list, ALLOW)
      const expected = mode === 'dontAsk' || mode === 'plan' ? 'refused' : 'asked'
      for (const a of list) expect([a.id, results.get(a.id)!.outcome]).toEqual([a.id, expected])
      if (mode === 'dontAsk') expect(results.get('toolu_glob')!.result).toContain('cannot run in the sandbox here')
      await assertNothingLeaked(fx, results, before)
    }, 90_000)
  }
})
