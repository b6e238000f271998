#!/usr/bin/env node
// bench:pane — what one tmux pane teammate weighs: a team of real `swarm agent` teammates on the
// loopback model (`swarm team create --backend tmux`, as a user runs it; and with `--hosted`, where
// each pane shows a teammate running inside the leader's process), measured once every
// teammate is idle and has settled: RSS and PSS (/proc/<pid>/smaps_rollup) of every process the
// teammate costs — those carrying its SWARM_AGENT_ID (its pane's wrapper, its agent) and its share
// of the tmux server's pipe-pane loggers — broken down by kind. The baseline, in the same run and
// measured at the same moment: a bare `node` process that only waits, the least a teammate written
// in Node could weigh. Target, of the hosted mode: ≤ 40 MB RSS and ≤ 10 MB PSS per teammate
// (issue 25); the process mode is reported beside it. One JSON object; exits 1 when a target is missed.
//
//   node bench/pane-weight.mjs [--teammates 8] [--settle-seconds 10] [--mode process,hosted]
import { spawn, spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { children, cmdline, markedProcesses, readEnv, smaps, tmuxServerPid } from './support/procs.mjs'
import { benchHome, option, sleep, waitReady } from './support/team-bench.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(root, 'bin/swarm.js')
const { startLoopbackServer } = await import(path.join(root, 'dist/loopback-model/loopback-server.js'))

const opt = option
const N = Number(opt('teammates', '8'))
const SETTLE_S = Number(opt('settle-seconds', '10'))
const MODES = opt('mode', 'process,hosted').split(',')
const READY_LIMIT_MS = 120_000
const TARGETS = { rssMbPerTeammate: 40, pssMbPerTeammate: 10 }

const round = (x) => (x === undefined || Number.isNaN(x) ? x : Math.round(x * 10) / 10)

const server = await startLoopbackServer({ scenario: { fallback: { text: 'ok' } } })
const results = []
const missed = []
try {
  for (const mode of MODES) results.push(await measure(mode))
} finally {
  await server.close()
}
// Hosted: the leader process runs every teammate; what it weighs more than the leader of the
// process-mode team (the same leader with no teammate inside) is the teammates' share.
const processRun = results.find((r) => r.mode === 'process' && !r.error)
for (const r of results) {
  if (r.mode !== 'hosted' || r.error) continue
  const base = processRun?.leader ?? r.leader
  r.hostShare = {
    rssMb: round((r.leader.rssMb - base.rssMb) / N),
    pssMb: round((r.leader.pssMb - base.pssMb) / N),
    baseline: processRun ? 'process-mode leader' : 'none: counted 0',
  }
  r.perTeammate.rssMb = round(r.perTeammate.rssMb + Math.max(0, r.hostShare.rssMb))
  r.perTeammate.pssMb = round(r.perTeammate.pssMb + Math.max(0, r.hostShare.pssMb))
}
// The target is the hosted mode's: a process-mode teammate is a Node process of its own, which
// cannot weigh less than the bare node beside it (reported, with what it costs above that).
for (const r of results) {
  if (r.error) continue
  if (r.mode === 'process') {
    r.aboveBareNode = { rssMb: round(r.byKind?.node?.rssMb - r.bareNode.rssMb), pssMb: round(r.byKind?.node?.pssMb - r.bareNode.pssMb) }
    continue
  }
  r.targets = { rss: r.perTeammate.rssMb <= TARGETS.rssMbPerTeammate, pss: r.perTeammate.pssMb <= TARGETS.pssMbPerTeammate }
}
for (const r of results) {
  if (r.error) missed.push(`${r.mode}: ${r.error}`)
  for (const [k, ok] of Object.entries(r.targets ?? {})) if (!ok) missed.push(`${r.mode}: ${k}`)
}

console.log(
  JSON.stringify({
    bench: 'pane-weight',
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map(round), node: process.version },
    teammates: N,
    settleSeconds: SETTLE_S,
    targets: TARGETS,
    results,
    missed,
    notes:
      'per teammate: the sum over the processes carrying its SWARM_AGENT_ID, plus its share (1/N) of the pipe-pane loggers (children of the tmux server) and, in hosted mode, of the host (the leader process, which runs every teammate: its growth over the same leader with no teammate is the cost). bareNode: `node -e setInterval(…)`, measured at the same moment.',
  }),
)
process.exitCode = missed.length ? 1 : 0

async function measure(mode) {
  const h = benchHome('pane', mode, server.url)
  const team = 'pw'
  const names = Array.from({ length: N }, (_, i) => `m${i}`)
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
    if (create.status !== 0) return { mode, error: `team create exited ${create.status}: ${create.stderr.slice(-400)}` }
    const readyMs = await waitReady(h, team, names, { limitMs: READY_LIMIT_MS, pollMs: 100 })
    if (readyMs === undefined) return { mode, error: 'the teammates did not all become idle' }
    await sleep(SETTLE_S * 1000)
    return { mode, readyMs: Math.round(readyMs), ...weigh(h, team, names), bareNode: kinds([bare.pid]).total }
  } finally {
    bare.kill('SIGKILL')
    spawnSync(process.execPath, [BIN, 'team', 'delete', team, '--timeout', '15'], { env: h.env, stdio: 'ignore' })
    h.cleanup()
  }
}

/** What the teammates weigh, each and by kind of process. */
function weigh(h, team, names) {
  const pids = markedProcesses(h.env.SWARM_HOME, team)
  const of = (name) => pids.filter((p) => readEnv(p).SWARM_AGENT_ID === `${name}@${team}`)
  const server = tmuxServerPid(h.env)
  const loggers = server ? children(server).filter((p) => /^cat\b/.test(cmdline(p))) : []
  const leader = pids.filter((p) => readEnv(p).SWARM_AGENT_ID === `team-lead@${team}` && path.basename(cmdline(p).split(' ')[0]) === 'node')
  const mates = names.map((n) => kinds(of(n)))
  const shared = kinds(loggers)
  const sum = (k) => mates.reduce((s, m) => s + m.total[k], 0)
  const perTeammate = {
    rssMb: round((sum('rssMb') + shared.total.rssMb) / names.length),
    pssMb: round((sum('pssMb') + shared.total.pssMb) / names.length),
    processes: round((mates.reduce((s, m) => s + m.total.processes, 0) + loggers.length) / names.length),
  }
  return { perTeammate, byKind: mates[0]?.byKind, pipePaneLoggers: loggers.length, leader: kinds(leader).total }
}

/** RSS/PSS of `pids`, in total and by kind (agent, wrapper, logger, other). */
function kinds(pids) {
  const byKind = {}
  const total = { rssMb: 0, pssMb: 0, processes: 0 }
  for (const pid of pids) {
    const m = smaps(pid)
    if (!m) continue
    const argv0 = path.basename(cmdline(pid).split(' ')[0])
    const kind = { node: 'node', sh: 'wrapper', cat: 'logger', tail: 'view' }[argv0] ?? argv0
    byKind[kind] ??= { rssMb: 0, pssMb: 0, processes: 0 }
    const k = byKind[kind]
    k.rssMb = round(k.rssMb + m.rss / 1024)
    k.pssMb = round(k.pssMb + m.pss / 1024)
    k.processes++
    total.rssMb = round(total.rssMb + m.rss / 1024)
    total.pssMb = round(total.pssMb + m.pss / 1024)
    total.processes++
  }
  return { total, byKind }
}
