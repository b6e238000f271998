#!/usr/bin/env node
// bench:cli — what one CLI call costs as a teammate's shell or a poller makes it: `swarm status
// <team> --json` and `swarm send <team> <name> <text>` (bin/swarm.js, the bundles `npm run build`
// makes), in teams of 1 and 16 teammates whose tmux panes are alive on an isolated tmux server,
// each member with a state file and messages in its inbox. The baseline, in the same run and
// interleaved with every call: `node -e 0`, Node's own start, which no CLI written in Node can beat.
// Also `swarm --version` (it must load no command code). Each team twice: with no leader running
// (`noLeader`: the CLI runs the call itself, the fallback), then with the team's `swarm leader`
// running in the background (`leader`: bin/swarm.js asks it on its socket, leader/leader-socket.ts),
// each phase with its own interleaved baseline. Wall time of the whole process, ≥ 10 runs
// each after warm-up runs (the first writes the V8 code cache); min/median/max; and the mean CPU time
// of each (the processes it started included), steadier than wall time on a shared machine. Target: median
// status and send ≤ 1.3 × node's median with the leader running (the no-leader figures are printed
// beside them). Prints one JSON object; exits 1 when a target is missed.
//
//   node bench/cli.mjs [--runs 15] [--sizes 1,16]
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(root, 'bin/swarm.js')
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : fallback
}
const RUNS = Math.max(10, Number(opt('runs', '15')))
const SIZES = opt('sizes', '1,16').split(',').map(Number)
const WARMUP = 2
const TARGET_RATIO = 1.3

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bench-cli-'))
const env = {
  PATH: process.env.PATH,
  HOME: home,
  SWARM_HOME: path.join(home, 'swarm'),
  TMUX_TMPDIR: path.join(home, 'tmux'),
  NO_COLOR: '1',
}
fs.mkdirSync(env.TMUX_TMPDIR)
const tmux = (...a) => execFileSync('tmux', ['-L', 'swarm', ...a], { env, encoding: 'utf8' }).trim()

const { createTeam } = await import(path.join(root, 'dist/teams/team-store.js'))
const { updateMemberState } = await import(path.join(root, 'dist/store/member-state.js'))
const { sendTeamMessage } = await import(path.join(root, 'dist/teams/messaging.js'))

const round = (x) => Math.round(x * 10) / 10
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return { min: round(s[0]), median: round(s[Math.floor(s.length / 2)]), max: round(s.at(-1)) }
}

/** A team of `n` teammates, each in a live tmux pane (`sleep`) tagged as swarm tags its panes, with state and mail. */
async function makeTeam(n) {
  const team = `cli${n}`
  const panes = []
  for (let i = 0; i <= n; i++) {
    const pane =
      i === 0
        ? tmux('new-session', '-d', '-P', '-F', '#{pane_id}', '-s', `swarm-${team}`, '-x', '200', '-y', '60', 'sleep 3600')
        : tmux('new-window', '-d', '-P', '-F', '#{pane_id}', '-t', `swarm-${team}`, 'sleep 3600')
    tmux('set-option', '-p', '-t', pane, '@swarm_agent', `${i === 0 ? 'team-lead' : `w${i}`}@${team}`)
    panes.push(pane)
  }
  const members = Array.from({ length: n }, (_, k) => ({ name: `w${k + 1}`, backendType: 'tmux', tmuxPaneId: panes[k + 1] }))
  await createTeam({ name: team, cwd: home, members }, env)
  for (const name of ['team-lead', ...members.map((m) => m.name)]) {
    await updateMemberState(team, name, { status: 'idle', pid: process.pid, model: 'claude-sonnet-4-5', lastActivity: Date.now() }, env, {
      create: true,
    })
  }
  for (let k = 0; k < 3; k++) await sendTeamMessage({ team, to: '*', text: `note ${k}`, env })
  return team
}

/**
 * CPU ms this process's waited-for children have used (user + system, the tmux clients they ran
 * included), from /proc/self/stat's cutime and cstime; undefined without /proc. Clock ticks
 * (10 ms): summed over all the runs of a command, their mean is good to ~1 ms.
 */
const TICK_MS = 10
function childrenCpuMs() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
    return (Number(fields[13]) + Number(fields[14])) * TICK_MS
  } catch {
    return undefined
  }
}

/** Wall ms and CPU ms of one run of `argv`; throws when it fails (a bench of a failing command measures nothing). */
function timed(argv) {
  const cpu0 = childrenCpuMs()
  const t0 = process.hrtime.bigint()
  const r = spawnSync(argv[0], argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`${argv.slice(1).join(' ')} exited ${r.status}: ${r.stderr}`)
  const cpu1 = childrenCpuMs()
  return { ms, cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 }
}

/** The team's leader, in the background as a script or CI job would run it; resolves once its socket listens. */
async function startLeader(team) {
  const child = spawn(process.execPath, [BIN, 'leader', team], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const sock = path.join(env.SWARM_HOME, 'teams', team, 'socket', 'leader.sock')
  for (const deadline = Date.now() + 30_000; !fs.lstatSync(sock, { throwIfNoEntry: false })?.isSocket(); ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`swarm leader ${team} did not open its socket:\n${out}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    async stop() {
      const exited = new Promise((r) => child.once('exit', r))
      process.kill(-child.pid, 'SIGTERM')
      await exited
    },
  }
}

/** Runs every command `RUNS` times after the warm-up, interleaved, so that a change of the machine's load touches every command alike. */
function measure(commands) {
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]))
  const cpu = Object.fromEntries(Object.keys(commands).map((k) => [k, 0]))
  for (let run = -WARMUP; run < RUNS; run++) {
    for (const [k, argv] of Object.entries(commands)) {
      const t = timed(argv)
      if (run < 0) continue
      times[k].push(t.ms)
      cpu[k] = t.cpuMs === undefined || cpu[k] === undefined ? undefined : cpu[k] + t.cpuMs
    }
  }
  const s = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, stats(xs)]))
  const ratio = (k) => Math.round((s[k].median / s.node.median) * 100) / 100
  const cpuMean = Object.fromEntries(Object.entries(cpu).map(([k, total]) => [k, total === undefined ? undefined : round(total / RUNS)]))
  const cpuRatio = (k) => (cpuMean.node ? Math.round((cpuMean[k] / cpuMean.node) * 100) / 100 : undefined)
  const named = Object.keys(commands).filter((k) => k !== 'node')
  return {
    loadavg1: round(os.loadavg()[0]),
    ms: s,
    ratioToNode: Object.fromEntries(named.map((k) => [k, ratio(k)])),
    cpuMsMean: cpuMean,
    cpuRatioToNode: Object.fromEntries(named.map((k) => [k, cpuRatio(k)])),
  }
}

const results = []
const missed = []
try {
  for (const n of SIZES) {
    const team = await makeTeam(n)
    const commands = {
      node: [process.execPath, '-e', '0'],
      status: [process.execPath, BIN, 'status', team, '--json'],
      send: [process.execPath, BIN, 'send', team, 'w1', 'hello from a shell'],
    }
    const noLeader = measure({ ...commands, version: [process.execPath, BIN, '--version'] })
    const leaderProcess = await startLeader(team)
    let leader
    try {
      leader = measure(commands)
    } finally {
      await leaderProcess.stop()
    }
    const targets = { status: leader.ratioToNode.status <= TARGET_RATIO, send: leader.ratioToNode.send <= TARGET_RATIO }
    for (const [k, ok] of Object.entries(targets)) if (!ok) missed.push(`${k}@${n}: ${leader.ratioToNode[k]}× node with the leader running`)
    results.push({ teammates: n, runs: RUNS, leader, noLeader, targets })
  }
} finally {
  spawnSync('tmux', ['-L', 'swarm', 'kill-server'], { env, stdio: 'ignore' })
  fs.rmSync(home, { recursive: true, force: true })
}

console.log(
  JSON.stringify({
    bench: 'cli',
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map(round), node: process.version },
    target: `median status and send ≤ ${TARGET_RATIO} × median node -e 0, with the team's leader running`,
    results,
    missed,
    notes:
      "leader: the team's swarm leader running, status and send answered on its socket; noLeader: none running, the CLI runs them itself (the fallback). ms: wall time of the whole process (spawn to exit) over `runs` runs after 2 warm-up runs, interleaved with node -e 0 in the same phase; loadavg1: the 1-minute load at the end of the phase; status is `status <team> --json` with every pane alive, send is one message from the lead to w1. cpuMsMean: mean CPU time (user + system, with the processes each ran) per run, from /proc/self/stat in 10 ms ticks — steadier than wall time on a shared machine; the targets are on wall time.",
  }),
)
process.exitCode = missed.length ? 1 : 0
