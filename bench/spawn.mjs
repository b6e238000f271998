#!/usr/bin/env node
// bench:spawn — 16 real `swarm agent` teammates in tmux through spawnTeammates (one process, as
// `team create --agents` does), each with a prompt, timed to the first model request of every one
// on the loopback model; against what a user would otherwise run, in the same run: one plain
// `tmux new-window -d` per teammate of the same `swarm agent` argv (its prompt put in its inbox
// the same way), timed to the same requests. Then `swarm status --json` with 16 members. Both on
// isolated tmux servers. Prints one JSON object last; exits 1 when a target is missed.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (m) => import(path.join(root, 'dist', m))
const { createTeam, readTeam } = await dist('teams/team-store.js')
const { createExecutor } = await dist('backends/registry.js')
const { spawnTeammates } = await dist('supervisor/teammates.js')
const { teamStatus } = await dist('supervisor/status.js')
const { sendTeamMessage } = await dist('teams/messaging.js')
const { ensureTeamKeys } = await dist('trust/keys.js')
const { startLoopbackServer } = await dist('loopback-model/loopback-server.js')

const N = 16
const server = await startLoopbackServer({ scenario: { fallback: { text: 'ok' } } })
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bench-spawn-'))
const env = {
  ...process.env,
  HOME: path.join(tmp, 'user-home'),
  SWARM_HOME: path.join(tmp, 'home'),
  TMUX_TMPDIR: path.join(tmp, 'tmux'),
  ANTHROPIC_API_KEY: 'bench',
  ANTHROPIC_BASE_URL: server.url,
}
fs.mkdirSync(env.HOME, { recursive: true })
for (const k of ['TMUX', 'TMUX_PANE', 'SWARM_TMUX_SOCKET']) delete env[k]
fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true })
const tmux = (...args) => execFileSync('tmux', ['-L', 'swarm', ...args], { env, encoding: 'utf8' })
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const names = Array.from({ length: N }, (_, i) => `mate${i}`)

/** Until every one of `names` has made a model request carrying `marker`; ms since t0 (undefined after 120 s). */
async function firstRequests(marker, t0) {
  for (;;) {
    const seen = new Set(server.requests.filter((r) => JSON.stringify(r.body ?? '').includes(marker)).map((r) => r.agent))
    if (names.every((n) => seen.has(n))) return performance.now() - t0
    if (performance.now() - t0 > 120_000) return undefined
    await sleep(10)
  }
}

try {
  // --- swarm: spawnTeammates through the executor, real agents, each with its prompt ---------
  await createTeam({ name: 'fast', cwd: tmp }, env)
  await ensureTeamKeys('fast', env)
  const executor = createExecutor('tmux', { env })
  const t0 = performance.now()
  await executor.ensureSession('fast', { argv: ['sleep', '600'], cwd: tmp })
  const sessionMs = performance.now() - t0
  const t1 = performance.now()
  await spawnTeammates(
    'fast',
    names.map((name) => ({ name, cwd: tmp, prompt: `start fast ${name}` })),
    { executor, env },
  )
  const spawnedMs16 = performance.now() - t1
  const readyMs16 = await firstRequests('start fast', t1)
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

  // --- baseline: what a user would otherwise run — tmux new-window per teammate, same argv ------
  await createTeam({ name: 'plain', cwd: tmp, members: names.map((name) => ({ name, cwd: tmp })) }, env)
  await ensureTeamKeys('plain', env)
  for (const name of names) await sendTeamMessage({ team: 'plain', to: name, text: `start plain ${name}`, env })
  tmux('new-session', '-d', '-s', 'plain', '-x', '220', '-y', '60', 'sleep', '600')
  const b0 = performance.now()
  for (const name of names) {
    tmux('new-window', '-d', '-t', 'plain:', '-c', tmp, process.execPath, path.join(root, 'bin/swarm.js'), 'agent', '--team', 'plain', '--name', name)
  }
  const baselineReadyMs16 = await firstRequests('start plain', b0)

  const result = {
    bench: 'spawn',
    teammates: N,
    readyMs16: round(readyMs16),
    spawnedMs16: round(spawnedMs16),
    sessionMs: round(sessionMs),
    registered,
    statusMs16: round(statusMs16),
    statusCoreMs16: round(statusCoreMs16),
    statusLeanMs16: round(statusLeanMs16),
    cliFloorMs: round(cliFloorMs),
    tmuxCallsPerStatus,
    aliveInStatus: alive,
    baseline: {
      readyMs16: round(baselineReadyMs16),
      method: 'one `tmux new-window -d` per teammate of the same `swarm agent` argv, prompts in the inboxes first',
    },
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map(round) },
    // No slower than the plain launch (10 % slack for noise), and every teammate asked its model.
    targets: { readyVsBaseline: 1.1, registered: N, statusMs16: 150, tmuxCallsPerStatus: 1 },
    checks: {
      readyVsBaseline: readyMs16 !== undefined && baselineReadyMs16 !== undefined && readyMs16 <= baselineReadyMs16 * 1.1,
      registered: registered === N,
      statusMs16: statusMs16 <= 150,
      tmuxCallsPerStatus: tmuxCallsPerStatus === 1,
    },
    notes:
      "readyMs16: spawnTeammates started → the first model request of every teammate (spawnedMs16: until spawnTeammates returned); the baseline's the same from its first new-window. statusMs16 is the wall time of `swarm status --json` (median of 5); cliFloorMs is `swarm --version`; statusLeanMs16 is the same status through tsc's dist modules, importing only commander and the status command; statusCoreMs16 is teamStatus() alone.",
  }
  result.missed = Object.entries(result.checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k)
  console.log(JSON.stringify(result))
  if (result.missed.length) process.exitCode = 1
} finally {
  await server.close()
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
