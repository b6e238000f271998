#!/usr/bin/env node
// bench:agent-start — what ONE `swarm agent` teammate costs from exec until its state.json says
// idle (issue 25: 64 of them start at once on 2 cores, so their start CPU is the team's ready
// time): CPU-ms of the agent process (every thread, /proc/<pid>/task/*/schedstat, and utime+stime)
// and wall ms, each run in a window of a tmux server of the bench's own as a pane would, one at a
// time, in a team of --team-size members on the loopback model. With --builds A,B (package roots,
// each with bin/ and dist/: e.g. a copy of main's build and this tree) the builds run interleaved,
// pair by pair, in the same team — the baseline measured in the same run. Each build's code cache
// (bin/swarm.js) is made first by one agent that exits cleanly, as a team's first start leaves it.
//
//   node bench/agent-start.mjs [--builds /path/to/main-build,.] [--runs 15] [--team-size 64] [--cpu-prof DIR]
// --cpu-prof DIR: every agent writes a V8 CPU profile there (the first of each build: its cache's warm-up).
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, option, readState, sleep } from './support/team-bench.mjs'
import { CLK_TCK, statFields } from './support/procs.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BUILDS = option('builds', '.')
  .split(',')
  .map((b) => path.resolve(root, b))
const RUNS = Number(option('runs', '15'))
const SIZE = Number(option('team-size', '64'))
const CPU_PROF = option('cpu-prof', undefined)
const LIMIT_MS = 30_000

const { startLoopbackServer } = await import(path.join(root, 'dist/loopback-model/loopback-server.js'))
const server = await startLoopbackServer({ scenario: { fallback: { text: 'ok' } } })
const h = benchHome('agent-start', String(SIZE), server.url)
const team = 'start'
const names = Array.from({ length: SIZE }, (_, i) => `m${i}`)
const tmux = (...a) => execFileSync('tmux', ['-L', 'bench-agent-start', ...a], { env: h.env, encoding: 'utf8' })
const round = (x) => (x === undefined ? x : Math.round(x * 10) / 10)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const loads = []
const runs = new Map(BUILDS.map((b) => [b, []]))

try {
  const create = spawnSync(
    process.execPath,
    [
      path.join(BUILDS[0], 'bin/swarm.js'),
      'team',
      'create',
      team,
      '--agents',
      names.join(','),
      '--backend',
      'tmux',
      '--no-start',
      '--cwd',
      h.project,
    ],
    { env: h.env, encoding: 'utf8' },
  )
  if (create.status !== 0) throw new Error(`team create exited ${create.status}: ${create.stderr}`)
  tmux('new-session', '-d', '-s', team, '-x', '200', '-y', '50', 'sleep', '3600')
  let next = 0
  const member = () => names[next++ % names.length]
  // With --cpu-prof the agent runs with other flags, so with a cache of its own (bin/swarm.js):
  // made first, the same way (the warm-up's profile is the first one written in DIR).
  for (const b of BUILDS) await warmCache(b, member(), CPU_PROF)
  for (let i = 0; i < RUNS; i++) {
    loads.push(os.loadavg()[0])
    // Alternate which build goes first, so that neither always follows the other.
    for (const b of i % 2 ? [...BUILDS].reverse() : BUILDS) runs.get(b).push(await startOne(b, member(), CPU_PROF))
  }
} finally {
  try {
    tmux('kill-server')
  } catch {
    // gone already
  }
  await server.close()
  h.cleanup()
}

const summary = (b) => {
  const rs = runs.get(b).filter((r) => r.idle)
  return {
    build: b,
    runs: rs.length,
    cpuMsMedian: round(median(rs.map((r) => r.cpuMs))),
    cpuMsMin: round(Math.min(...rs.map((r) => r.cpuMs))),
    tickCpuMsMedian: round(median(rs.map((r) => r.tickCpuMs))),
    wallMsMedian: round(median(rs.map((r) => r.wallMs))),
  }
}
const results = BUILDS.map(summary)
const pairs = BUILDS.length === 2 ? runs.get(BUILDS[0]).map((r, i) => runs.get(BUILDS[1])[i].cpuMs / r.cpuMs) : []
console.log(
  JSON.stringify({
    bench: 'agent-start',
    machine: { cores: os.availableParallelism(), loadavg1Min: round(Math.min(...loads)), loadavg1Max: round(Math.max(...loads)) },
    teamSize: SIZE,
    results,
    ...(pairs.length ? { pairedCpuRatioMedian: Math.round(median(pairs) * 1000) / 1000 } : {}),
    notes:
      'cpuMs: CPU of the agent process from exec until its state.json said idle, summed over its threads (schedstat); tickCpuMs: utime+stime (10 ms ticks, exited threads included). One agent at a time, in a tmux window. pairedCpuRatioMedian: second build / first, run by run.',
  }),
)

/** One agent that exits cleanly (shutdown by SIGTERM): the build's code cache is then written, as a team's first run leaves it. */
async function warmCache(build, name, cpuProf) {
  const r = await startOne(build, name, cpuProf)
  if (!r.idle) throw new Error(`${build}: ${name} never went idle`)
}

/** `swarm agent` in a new window of the bench's tmux server, until idle; then ended (SIGTERM) and waited for. */
async function startOne(build, name, cpuProf) {
  const state = path.join(h.env.SWARM_HOME, 'teams', team, 'agents', name, 'state.json')
  fs.rmSync(state, { force: true })
  const prof = cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []
  const t0 = performance.now()
  const pid = Number(
    tmux(
      'new-window',
      '-d',
      '-P',
      '-F',
      '#{pane_pid}',
      '-t',
      `${team}:`,
      '-c',
      h.project,
      process.execPath,
      ...prof,
      path.join(build, 'bin/swarm.js'),
      'agent',
      '--team',
      team,
      '--name',
      name,
    ).trim(),
  )
  let idle = false
  while (performance.now() - t0 < LIMIT_MS) {
    if (readState(state)?.status === 'idle') {
      idle = true
      break
    }
    await sleep(2)
  }
  const wallMs = performance.now() - t0
  const cpuMs = threadsCpuMs(pid)
  const f = statFields(pid)
  const tickCpuMs = f ? ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK : undefined
  process.kill(pid, 'SIGTERM')
  while (statFields(pid) && statFields(pid)[0] !== 'Z') await sleep(10)
  await sleep(100)
  return { idle, wallMs, cpuMs, tickCpuMs }
}

/** The CPU time of every live thread of `pid` (schedstat: nanoseconds on CPU). */
function threadsCpuMs(pid) {
  let ns = 0
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6
}
