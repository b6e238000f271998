#!/usr/bin/env node
// bench:spawn — 16 teammates in tmux through the executor API (one process, as `team create
// --agents` does) against the naive way (one tmux process per command, send-keys into a shell,
// a 200 ms settle per pane), both on an isolated tmux server; then `swarm status --json` with 16
// members. Prints one JSON object last.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (m) => import(path.join(root, 'dist', m))
const { createTeam, addMember, updateMember, readTeam } = await dist('teams/team-store.js')
const { createExecutor } = await dist('backends/registry.js')
const { spawnTeammates } = await dist('supervisor/teammates.js')
const { teamStatus } = await dist('supervisor/status.js')

const N = 16
const SETTLE_MS = 200 // Claude Code's PANE_SHELL_INIT_DELAY_MS
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bench-spawn-'))
const env = { ...process.env, HOME: path.join(tmp, 'user-home'), SWARM_HOME: path.join(tmp, 'home'), TMUX_TMPDIR: path.join(tmp, 'tmux') }
fs.mkdirSync(env.HOME, { recursive: true })
for (const k of ['TMUX', 'TMUX_PANE', 'SWARM_TMUX_SOCKET']) delete env[k]
fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true })
const tmux = (...args) => execFileSync('tmux', ['-L', 'swarm', ...args], { env, encoding: 'utf8' })
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const names = Array.from({ length: N }, (_, i) => `mate${i}`)

try {
  // --- swarm: spawnTeammates through the executor -------------------------------------------
  await createTeam({ name: 'fast', cwd: tmp }, env)
  const executor = createExecutor('tmux', { env })
  const t0 = performance.now()
  await executor.ensureSession('fast', { argv: ['sleep', '600'], cwd: tmp })
  const sessionMs = performance.now() - t0
  const t1 = performance.now()
  await spawnTeammates(
    'fast',
    names.map((name) => ({ name, argv: ['sleep', '30'], cwd: tmp })),
    { executor, env },
  )
  const ids = names.map((n) => `${n}@fast`)
  for (;;) {
    const states = await executor.status(ids)
    if ([...states.values()].every((s) => s.state === 'alive')) break
    await sleep(5)
  }
  const readyMs16 = performance.now() - t1
  const config = await readTeam('fast', env)
  const registered = config.members.filter((m) => m.isActive && m.tmuxPaneId.startsWith('%')).length

  // --- status: tmux calls per status, and the CLI's wall time --------------------------------
  const before = executor.tmuxCalls
  const tStatus = performance.now()
  const status = await teamStatus('fast', { env, executors: { tmux: executor } })
  const statusCoreMs16 = performance.now() - tStatus
  const tmuxCallsPerStatus = executor.tmuxCalls - before
  const alive = status.members.filter((m) => m.state === 'alive').length

  const cli = (args) => {
    const t = performance.now()
    const r = spawnSync(process.execPath, [path.join(root, 'bin/swarm.js'), ...args], { env, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`swarm ${args.join(' ')} failed: ${r.stderr}`)
    return performance.now() - t
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  cli(['status', 'fast', '--json']) // warm the disk cache (and write the bundle's code cache, as a user's first run does)
  const statusMs16 = median(Array.from({ length: 5 }, () => cli(['status', 'fast', '--json'])))
  const cliFloorMs = median(Array.from({ length: 5 }, () => cli(['--version'])))
  // The same status through a CLI entry that loads only commander and the status command, as
  // main.ts would with every command group imported lazily.
  const lean = `await import('commander'); const m = await import(${JSON.stringify(path.join(root, 'dist/cli/status.js'))}); await m.runStatus('fast', { json: true })`
  const leanRun = () => {
    const t = performance.now()
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', lean], { env, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`lean status failed: ${r.stderr}`)
    return performance.now() - t
  }
  const statusLeanMs16 = median(Array.from({ length: 5 }, leanRun))

  // --- baseline: the naive way, measured in the same run ------------------------------------
  await createTeam({ name: 'naive', cwd: tmp }, env)
  const leader = tmux('new-session', '-d', '-s', 'swarm-naive', '-x', '220', '-y', '60', '-P', '-F', '#{pane_id}', 'sleep', '600').trim()
  const b0 = performance.now()
  const panes = []
  for (const name of names) {
    // One tmux process per command; a shell in the pane; wait for it; type the command.
    const pane = tmux('split-window', '-h', '-t', leader, '-P', '-F', '#{pane_id}').trim()
    tmux('select-layout', '-t', 'swarm-naive:', 'main-vertical')
    tmux('select-pane', '-t', pane, '-T', name)
    tmux('set', '-p', '-t', pane, '@agent_color', 'blue')
    tmux('set', '-w', '-t', 'swarm-naive:', 'pane-border-status', 'top')
    await sleep(SETTLE_MS)
    tmux('send-keys', '-t', pane, `cd ${tmp} && env SWARM_TEAM=naive sleep 30`, 'Enter')
    await addMember('naive', { name, cwd: tmp, backendType: 'tmux' }, env)
    await updateMember('naive', name, { tmuxPaneId: pane, isActive: true }, env)
    panes.push(pane)
  }
  for (;;) {
    const commands = tmux('list-panes', '-t', 'swarm-naive:', '-F', '#{pane_id} #{pane_current_command}')
    if (panes.every((p) => commands.includes(`${p} sleep`))) break
    await sleep(5)
  }
  const baselineReadyMs16 = performance.now() - b0

  const result = {
    bench: 'spawn',
    teammates: N,
    readyMs16: round(readyMs16),
    sessionMs: round(sessionMs),
    registered,
    statusMs16: round(statusMs16),
    statusCoreMs16: round(statusCoreMs16),
    statusLeanMs16: round(statusLeanMs16),
    cliFloorMs: round(cliFloorMs),
    tmuxCallsPerStatus,
    aliveInStatus: alive,
    baseline: { readyMs16: round(baselineReadyMs16), settleMsPerPane: SETTLE_MS, method: 'one tmux process per command, send-keys into a shell' },
    speedup: round(baselineReadyMs16 / readyMs16),
    targets: {
      readyMs16: readyMs16 <= 1000,
      speedup3x: baselineReadyMs16 / readyMs16 >= 3,
      statusMs16: statusMs16 <= 150,
      tmuxCallsPerStatus: tmuxCallsPerStatus === 1,
    },
    notes:
      "statusMs16 is the wall time of `swarm status --json` (median of 5); cliFloorMs is `swarm --version`, the start-up every command pays before its own work (bin/swarm.js runs the command's bundle from dist/bundle, compiled with a code cache that the warm-up run writes); statusLeanMs16 is the same status through tsc's dist modules, importing only commander and the status command; statusCoreMs16 is teamStatus() alone.",
  }
  console.log(JSON.stringify(result))
} finally {
  // Reap by socket, never by name; then the sleeps that survive a closed pane.
  try {
    tmux('kill-server')
  } catch {
    // already gone
  }
  fs.rmSync(tmp, { recursive: true, force: true })
}

function round(x) {
  return Math.round(x * 10) / 10
}
