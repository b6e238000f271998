#!/usr/bin/env node
// bench:idle — what an idle team costs the machine: a team of real `swarm agent` teammates on the
// loopback model (`swarm team create --backend tmux`, as a user runs it; `--modes process,hosted`),
// left alone once every teammate is idle. After the settle time (the "first minute"),
// CPU-seconds (/proc/<pid>/stat utime + stime) over the window of every process of the team —
// the leader, the teammates and what their panes run, the pipe-pane loggers — and of the tmux
// server. The baseline, in the same run and the same window: a bare `node` process that only waits
// (what any idle Node process costs). Target: the whole team < 2 % of one core. One JSON object;
// exits 1 when a target is missed.
//
//   node bench/idle.mjs [--sizes 16,64] [--modes process] [--settle-seconds 60] [--window-seconds 60]
import { spawn, spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CLK_TCK, children, cmdline, cpuTicks, markedProcesses, tmuxServerPid } from './support/procs.mjs'
import { benchHome, option, sleep, waitReady } from './support/team-bench.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(root, 'bin/swarm.js')
const { startLoopbackServer } = await import(path.join(root, 'dist/loopback-model/loopback-server.js'))

const opt = option
const SIZES = opt('sizes', '16').split(',').map(Number)
const MODES = opt('modes', 'process').split(',')
const SETTLE_S = Number(opt('settle-seconds', '60'))
const WINDOW_S = Number(opt('window-seconds', '60'))
const READY_LIMIT_MS = 180_000
const TARGET_CORE_PERCENT = 2

const round = (x) => (x === undefined || Number.isNaN(x) ? x : Math.round(x * 100) / 100)

const server = await startLoopbackServer({ scenario: { fallback: { text: 'ok' } } })
const results = []
try {
  for (const n of SIZES) for (const mode of MODES) results.push(await measure(n, mode))
} finally {
  await server.close()
}
const missed = results.flatMap((r) =>
  r.error ? [`${r.mode}@${r.teammates}: ${r.error}`] : r.target ? [] : [`${r.mode}@${r.teammates}: ${r.corePercent}% of a core`],
)

console.log(
  JSON.stringify({
    bench: 'idle',
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10), node: process.version },
    settleSeconds: SETTLE_S,
    windowSeconds: WINDOW_S,
    target: `the idle team (leader, teammates, their panes' processes, tmux server) < ${TARGET_CORE_PERCENT}% of one core`,
    results,
    missed,
  }),
)
process.exitCode = missed.length ? 1 : 0

async function measure(n, mode) {
  const h = benchHome('idle', `${mode}-${n}`, server.url)
  const team = 'idle'
  const names = Array.from({ length: n }, (_, i) => `m${i}`)
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' })
  try {
    const create = spawnSync(
      process.execPath,
      [
        BIN,
        'team',
        'create',
        team,
        '--agents',
        names.join(','),
        '--backend',
        'tmux',
        '--no-attach',
        '--cwd',
        h.project,
        ...(mode === 'hosted' ? ['--hosted'] : ['--isolated']),
      ],
      { env: h.env, encoding: 'utf8' },
    )
    if (create.status !== 0) return { mode, teammates: n, error: `team create exited ${create.status}: ${create.stderr.slice(-400)}` }
    if ((await waitReady(h, team, names, { limitMs: READY_LIMIT_MS, pollMs: 200 })) === undefined)
      return { mode, teammates: n, error: 'the teammates did not all become idle' }
    await sleep(SETTLE_S * 1000)
    const pids = () => {
      const tmux = tmuxServerPid(h.env)
      return [...markedProcesses(h.env.SWARM_HOME, team), ...(tmux ? [tmux, ...children(tmux).filter((p) => /^cat\b/.test(cmdline(p)))] : [])]
    }
    const before = cpuTicks([...pids(), bare.pid])
    await sleep(WINDOW_S * 1000)
    const after = cpuTicks([...pids(), bare.pid])
    const used = (pid) => (after.get(pid) ?? 0) - (before.get(pid) ?? after.get(pid) ?? 0)
    const team_ = [...after.keys()].filter((p) => p !== bare.pid)
    const byProgram = {}
    for (const pid of team_) {
      const program = path.basename(cmdline(pid).split(' ')[0]) || String(pid)
      byProgram[program] ??= { processes: 0, cpuSeconds: 0 }
      const k = byProgram[program]
      k.processes++
      k.cpuSeconds = round(k.cpuSeconds + used(pid) / CLK_TCK)
    }
    const cpuSeconds = team_.reduce((s, p) => s + used(p), 0) / CLK_TCK
    const corePercent = round((100 * cpuSeconds) / WINDOW_S)
    return {
      mode,
      teammates: n,
      processes: team_.length,
      cpuSeconds: round(cpuSeconds),
      corePercent,
      byProgram,
      bareNodeCorePercent: round((100 * used(bare.pid)) / CLK_TCK / WINDOW_S),
      target: corePercent < TARGET_CORE_PERCENT,
    }
  } finally {
    bare.kill('SIGKILL')
    spawnSync(process.execPath, [BIN, 'team', 'delete', team, '--force'], { env: h.env, stdio: 'ignore' })
    h.cleanup()
  }
}
