import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stopTeamMembers } from '../../src/supervisor/stop.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { inboxPath } from '../../src/home/paths.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { isAlive, waitForExit } from '../../src/process/liveness.js'
import { TEAMMATE, isolatedEnv, readJson, tempDir } from './harness.js'
import { waitFor } from '../support/wait.js'
import { hasTmux, reapTmux } from '../support/tmux.js'

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/swarm.js')

interface Run {
  code: number
  stdout: string
  stderr: string
}

describe.skipIf(!hasTmux)('swarm spawn / status / kill / attach / doctor', () => {
  let root: string
  let env: NodeJS.ProcessEnv
  const swarm = (...args: string[]) =>
    new Promise<Run>((resolve) => {
      execFile(process.execPath, [BIN, ...args], { env, timeout: 20_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      )
    })
  const node = (...args: string[]) => [process.execPath, TEAMMATE, ...args].map((a) => `'${a}'`).join(' ')
  const statusOf = async (team: string, name: string) => {
    const r = await swarm('status', team, '--json')
    expect(r.code, r.stderr).toBe(0)
    return (JSON.parse(r.stdout).members as Array<Record<string, unknown>>).find((m) => m.name === name)!
  }

  beforeAll(async () => {
    root = tempDir('swarm-cli-')
    env = isolatedEnv(root)
    await createTeam({ name: 'crew', cwd: root }, env)
  })
  afterAll(async () => {
    await reapTmux(env)
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  })

  it('spawns any command in tmux, registers it, and delivers the prompt untouched', async () => {
    const cwd = path.join(root, "a dir; with 'quotes' $(x)")
    fs.mkdirSync(cwd)
    const prompt = `do "this"; $(touch ${path.join(root, 'PWNED')}) \`id\` 'now'`
    const out = path.join(root, 'alice.json')
    const r = await swarm('spawn', 'crew', 'alice', '--backend', 'tmux', '--cwd', cwd, '--prompt', prompt, '--command', node('record', out), '--json')
    expect(r.code, r.stderr).toBe(0)
    const spawned = JSON.parse(r.stdout)
    expect(spawned).toMatchObject({ team: 'crew', name: 'alice', agentId: 'alice@crew', backend: 'tmux', cwd })
    expect(spawned.pane).toMatch(/^%\d+$/)
    expect(spawned.attach).toBe('tmux -L swarm attach -t swarm-crew')
    const seen = await waitFor('alice to start', () => readJson(out), 15_000)
    expect(seen.cwd).toBe(cwd)
    const member = (await readTeam('crew', env)).members.find((m) => m.name === 'alice')!
    expect(member).toMatchObject({ backendType: 'tmux', tmuxPaneId: spawned.pane, isActive: true, cwd, prompt })
    expect((await readInbox(inboxPath('crew', 'alice', env)))[0]).toMatchObject({ from: 'team-lead', text: prompt })
    expect(fs.existsSync(path.join(root, 'PWNED'))).toBe(false)
    expect(await statusOf('crew', 'alice')).toMatchObject({ backend: 'tmux', pane: spawned.pane, state: 'alive' })
    const human = await swarm('status', 'crew')
    expect(human.stdout).toMatch(/alice\s+alive\s+tmux\s+%\d+/)
  })

  it('reports a teammate that exited, with its code', async () => {
    const r = await swarm('spawn', 'crew', 'brief', '--backend', 'tmux', '--command', 'sleep 0.2; exit 6')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^spawned brief in tmux pane %\d+/)
    // (The 2-second bound is checked without CLI start-up noise in the contract suite.)
    await waitFor('the exit', async () => (await statusOf('crew', 'brief')).state === 'exited', 15_000)
    expect(await statusOf('crew', 'brief')).toMatchObject({ state: 'exited', exitCode: 6 })
  })

  it('kill asks first and forces after the timeout; --now kills at once; both take the whole tree', async () => {
    const outA = path.join(root, 'tree-a.json')
    const outB = path.join(root, 'tree-b.json')
    expect((await swarm('spawn', 'crew', 'tree-a', '--backend', 'tmux', '--command', node('tree', outA))).code).toBe(0)
    expect((await swarm('spawn', 'crew', 'tree-b', '--backend', 'tmux', '--command', node('tree', outB))).code).toBe(0)
    const a = await waitFor('tree-a', () => readJson(outA), 15_000)
    const b = await waitFor('tree-b', () => readJson(outB), 15_000)
    const graceful = await swarm('kill', 'crew', 'tree-a', '--timeout', '300')
    expect(graceful.code, graceful.stderr).toBe(0)
    expect(graceful.stdout).toMatch(/did not stop within 300 ms; killed it/)
    const request = (await readInbox(inboxPath('crew', 'tree-a', env))).at(-1)!
    expect(JSON.parse(request.text)).toMatchObject({ type: 'shutdown_request', from: 'team-lead' })
    const now = await swarm('kill', 'crew', 'tree-b', '--now', '--json')
    expect(JSON.parse(now.stdout)).toMatchObject({ outcome: 'killed' })
    expect(await waitForExit([a.pid, a.grandchild, b.pid, b.grandchild], 10_000)).toBe(true)
    expect((await statusOf('crew', 'tree-b')).state).toBe('dead')
    expect((await readTeam('crew', env)).members.find((m) => m.name === 'tree-b')?.isActive).toBe(false)
  })

  it('kill --respect-refusal leaves a teammate that refuses running (exit 4); without it the refusal is overridden', async () => {
    const inbox = (n: string) => inboxPath('crew', n, env)
    for (const n of ['stubborn', 'stubborn-2'])
      expect((await swarm('spawn', 'crew', n, '--backend', 'tmux', '--command', node('refuse-shutdown', inbox(n), inbox('team-lead'), n))).code).toBe(
        0,
      )
    await waitFor('both to run', async () => (await statusOf('crew', 'stubborn-2')).state === 'alive', 15_000)
    const respected = await swarm('kill', 'crew', 'stubborn', '--respect-refusal', '--timeout', '10000')
    expect(respected.code, respected.stderr).toBe(4)
    expect(respected.stderr).toMatch(/^swarm: stubborn refused to shut down \(in the middle of a migration\); left running/)
    expect(await statusOf('crew', 'stubborn')).toMatchObject({ state: 'alive' })
    expect((await readTeam('crew', env)).members.find((m) => m.name === 'stubborn')?.isActive).not.toBe(false)
    const json = await swarm('kill', 'crew', 'stubborn', '--respect-refusal', '--json')
    expect(json.code).toBe(4)
    expect(JSON.parse(json.stdout)).toMatchObject({ outcome: 'refused', reason: 'in the middle of a migration' })
    expect((await swarm('kill', 'crew', 'stubborn', '--respect-refusal', '--now')).code).toBe(2)
    const forced = await swarm('kill', 'crew', 'stubborn-2')
    expect(forced.code, forced.stderr).toBe(0)
    expect(forced.stdout).toMatch(/refused to shut down \(in the middle of a migration\); killed it/)
    expect((await statusOf('crew', 'stubborn-2')).state).toBe('dead')
    expect((await swarm('kill', 'crew', 'stubborn', '--now')).code).toBe(0)
  })

  it('fails with the documented exit codes and a one-line message', async () => {
    // A team that runs nowhere yet, and no TTY here: detection says in-process (a tmux team would spawn on tmux).
    await createTeam({ name: 'bare', cwd: root }, env)
    const auto = await swarm('spawn', 'bare', 'x', '--command', 'true')
    expect(auto.code).toBe(7)
    expect(auto.stderr).toMatch(/^swarm: an in-process teammate runs inside its leader.* — /)
    expect((await swarm('spawn', 'crew', 'x', '--backend', 'iterm2', '--command', 'true')).code).toBe(7)
    expect((await swarm('spawn', 'crew', 'x', '--backend', 'screen', '--command', 'true')).code).toBe(2)
    expect((await swarm('spawn', 'nope', 'x', '--backend', 'tmux', '--command', 'true')).code).toBe(3)
    expect((await swarm('spawn', 'crew', '../evil', '--backend', 'tmux', '--command', 'true')).code).toBe(2)
    expect((await swarm('spawn', 'crew', 'x', '--backend', 'tmux', '--cwd', path.join(root, 'missing'), '--command', 'true')).code).toBe(2)
    const twice = await swarm('spawn', 'crew', 'alice', '--backend', 'tmux', '--command', 'true')
    expect(twice.code).toBe(4)
    expect(twice.stderr).toMatch(/already running: alice@crew/)
    expect((await swarm('kill', 'crew', 'nobody')).code).toBe(3)
    expect((await swarm('status', 'nope')).code).toBe(3)
  })

  it('attach says what is wrong: no session (3), no terminal (2, with the plain tmux command)', async () => {
    const missing = await swarm('attach', 'ghosts')
    expect(missing.code).toBe(3)
    expect(missing.stderr).toMatch(/no tmux session/)
    const noTty = await swarm('attach', 'crew')
    expect(noTty.code).toBe(2)
    expect(noTty.stderr).toMatch(/attach needs a terminal — .*attach -t swarm-crew/)
  })

  it('doctor explains the detection and lists what it found', async () => {
    const r = await swarm('doctor', '--json')
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({ backend: 'in-process', environment: { insideTmux: false, isTTY: false }, tmux: { ok: true, serverRunning: true } })
    expect(report.tmux.sessions).toContain('swarm-crew')
    expect(report.trace).toContain('no terminal: not interactive')
    const human = await swarm('doctor')
    expect(human.stdout).toMatch(/^backend: in-process — not interactive/)
  })

  it('doctor warns when the tmux server teammates would run on lets their output set your clipboard', async () => {
    const socket = path.join(root, 'users-tmux')
    const conf = path.join(root, 'users.conf')
    fs.writeFileSync(conf, 'set -s set-clipboard on\n')
    execFileSync('tmux', ['-S', socket, '-f', conf, 'new-session', '-d', 'sleep 600'], { env })
    try {
      const inside = { ...env, TMUX: `${socket},1,0`, TMUX_PANE: '%0' }
      const run = (...args: string[]) => execFileSync(process.execPath, [BIN, 'doctor', ...args], { env: inside, encoding: 'utf8' })
      expect(JSON.parse(run('--json')).tmux.clipboard).toBe('on')
      expect(run()).toMatch(/set-clipboard on: a teammate's output can set your clipboard/)
      execFileSync('tmux', ['-S', socket, 'set', '-s', 'set-clipboard', 'external'], { env })
      expect(run()).not.toMatch(/set-clipboard on/)
    } finally {
      execFileSync('tmux', ['-S', socket, 'kill-server'], { env })
    }
  })

  it("status shows the leader's pane, found by its tag (none is recorded for it)", async () => {
    await createTeam({ name: 'lead-pane', cwd: root }, env)
    expect((await swarm('spawn', 'lead-pane', 'a', '--backend', 'tmux', '--command', 'sleep 600')).code).toBe(0)
    expect((await readTeam('lead-pane', env)).members.find((m) => m.name === 'team-lead')?.tmuxPaneId).toBe('')
    const leaderPane = await new Promise<string>((resolve, reject) =>
      execFile('tmux', ['-L', 'swarm', 'list-panes', '-a', '-F', '#{pane_id} #{@swarm_agent}'], { env }, (err, stdout) =>
        err
          ? reject(err)
          : resolve(
              stdout
                .split('\n')
                .find((l) => l.endsWith(' team-lead@lead-pane'))!
                .split(' ')[0],
            ),
      ),
    )
    expect(leaderPane).toMatch(/^%\d+$/)
    const lead = (JSON.parse((await swarm('status', 'lead-pane', '--json')).stdout).members as Array<Record<string, unknown>>).find(
      (m) => m.name === 'team-lead',
    )
    expect(lead).toMatchObject({ backend: 'tmux', pane: leaderPane })
    const table = (await swarm('status', 'lead-pane')).stdout.split('\n').find((l) => l.startsWith('team-lead'))!
    expect(table.split(/\s+/).slice(2, 4)).toEqual(['tmux', leaderPane])
    await stopTeamMembers('lead-pane', { graceful: false, env })
  })

  it('stopTeamMembers leaves no pane, session or process behind', async () => {
    await createTeam({ name: 'gone', cwd: root }, env)
    const out = path.join(root, 'gone-tree.json')
    expect((await swarm('spawn', 'gone', 'a', '--backend', 'tmux', '--command', node('tree', out))).code).toBe(0)
    expect((await swarm('spawn', 'gone', 'b', '--backend', 'tmux', '--command', 'sleep 600')).code).toBe(0)
    const tree = await waitFor('the tree', () => readJson(out), 15_000)
    const report = await stopTeamMembers('gone', { graceful: true, timeoutMs: 300, env })
    expect(report.killed.sort()).toEqual(['a', 'b'])
    expect(await waitForExit([tree.pid, tree.grandchild], 10_000)).toBe(true)
    const sessions = await swarm('doctor', '--json')
    expect(JSON.parse(sessions.stdout).tmux.sessions).not.toContain('swarm-gone')
    expect((await readTeam('gone', env)).members.every((m) => !m.isActive)).toBe(true)
    expect(isAlive(tree.pid)).toBe(false)
  })
})
