#!/usr/bin/env node
// bench:remote — a teammate on another machine against one here, side by side in one run, over
// Debian's real sshd on a test host (test/support/sshd.ts: a network namespace where the kernel
// allows, else loopback; 25 ms each way = 50 ms RTT, by tc netem or, without sch_netem, the
// harness's delaying proxy — `host.mode` says which). Through the CLI a user runs:
//   spawn → ready:        `swarm spawn T <name> --prompt …` (with `--host` for the remote one)
//                         started → the member's first model request on the loopback model;
//   message → request:    sendTeamMessage (the lead's send) → that message's model request, median
//                         of ROUNDS, for each;
//   8 parallel spawns:    8 `swarm spawn --host` processes at once on a cold connection (the race
//                         of ControlMasters): every one exits 0, every member makes its request
//                         and shows alive in one `swarm status` (no lost attach).
// Prints one JSON object last; exits 1 when a target is missed.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (m) => import(path.join(root, 'dist', m))
const { createTeam } = await dist('teams/team-store.js')
const { ensureTeamKeys } = await dist('trust/keys.js')
const { sendTeamMessage } = await dist('teams/messaging.js')
const { startLoopbackServer } = await dist('loopback-model/loopback-server.js')

const ONE_WAY_MS = 25
const ROUNDS = 5
const PARALLEL = 8
const TEAM = 'bench-remote'
const BURST = 'bench-burst'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const log = (s) => process.stderr.write(`bench:remote: ${s}\n`)
const round = (x) => (x === undefined ? undefined : Math.round(x))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bench-remote-')))
// The test host, compiled from the suite's own harness (one implementation of the remote machine),
// into dist/ (build output) so that its packages (execa) resolve from this checkout.
const harness = path.join(root, 'dist', 'bench', 'sshd-harness.mjs')
await build({
  entryPoints: [path.join(root, 'test/support/sshd.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  outfile: harness,
  define: { 'import.meta.dirname': JSON.stringify(path.join(root, 'test/support')) },
  logLevel: 'error',
})
const { startTestHost, hasSshd } = await import(harness)
if (!hasSshd) {
  console.error('bench:remote: needs /usr/sbin/sshd and /usr/bin/ssh (Debian: apt-get install openssh-server openssh-client)')
  process.exit(2)
}

const host = await startTestHost(tmp, { delayMs: ONE_WAY_MS })
const server = await startLoopbackServer({ scenario: { fallback: { text: 'ok' } }, host: host.localAddress })
const env = {
  ...process.env,
  HOME: path.join(tmp, 'user-home'),
  SWARM_HOME: path.join(tmp, 'home'),
  TMUX_TMPDIR: path.join(tmp, 'tmux'),
  SWARM_SSH_CONFIG: host.sshConfig,
  ANTHROPIC_API_KEY: 'bench',
  ANTHROPIC_BASE_URL: server.url,
  NO_COLOR: '1',
}
for (const k of ['TMUX', 'TMUX_PANE', 'SWARM_TMUX_SOCKET', 'CLAUDE_CONFIG_DIR', 'SWARM_LEAD_VERIFY_KEY', 'ANTHROPIC_AUTH_TOKEN']) delete env[k]
fs.mkdirSync(env.HOME, { recursive: true })
fs.mkdirSync(env.TMUX_TMPDIR, { recursive: true })

/** `swarm <args>` as a user runs it; resolves with its exit code, output and wall time. */
function swarm(args) {
  const t0 = performance.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/swarm.js'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => resolve({ code, stdout: out, stderr: err, ms: performance.now() - t0 }))
  })
}

/** ms from t0 until the model has a request of `agent` carrying `marker` (undefined after `limitMs`). */
async function requestOf(agent, marker, t0, limitMs = 60_000) {
  for (;;) {
    const hit = server.requests.find((r) => r.agent === agent && JSON.stringify(r.body ?? '').includes(marker))
    if (hit) return performance.now() - t0
    if (performance.now() - t0 > limitMs) return undefined
    await sleep(5)
  }
}

async function spawnToReady(name, extra) {
  const t0 = performance.now()
  const [r, readyMs] = await Promise.all([swarm(['spawn', TEAM, name, ...extra, '--prompt', `start ${name}`]), requestOf(name, `start ${name}`, t0)])
  if (r.code !== 0) throw new Error(`swarm spawn ${name} failed (${r.code}): ${r.stderr}`)
  return { readyMs, spawnReturnedMs: r.ms }
}

async function messageToRequest(name) {
  const times = []
  for (let i = 0; i < ROUNDS; i++) {
    await sleep(400) // idle again after the last turn
    const marker = `ping ${name} ${i}`
    const t0 = performance.now()
    await sendTeamMessage({ team: TEAM, to: name, text: marker, env })
    const ms = await requestOf(name, marker, t0, 30_000)
    if (ms === undefined) throw new Error(`${name} never asked its model about "${marker}"`)
    times.push(ms)
  }
  return { medianMs: median(times), allMs: times.map(round) }
}

let result
try {
  log(`test host: ${host.mode} ${host.host}, ${ONE_WAY_MS} ms each way`)
  await createTeam({ name: TEAM, cwd: tmp }, env)
  await ensureTeamKeys(TEAM, env)
  await createTeam({ name: BURST, cwd: tmp }, env)
  await ensureTeamKeys(BURST, env)

  // --- one remote and one local teammate, side by side -----------------------------------------
  const local = await spawnToReady('here', ['--backend', 'tmux'])
  log(`local ready in ${round(local.readyMs)} ms`)
  const remote = await spawnToReady('there', ['--host', host.host])
  log(`remote ready in ${round(remote.readyMs)} ms`)
  const localMsg = await messageToRequest('here')
  const remoteMsg = await messageToRequest('there')
  log(`message → request: local ${round(localMsg.medianMs)} ms, remote ${round(remoteMsg.medianMs)} ms`)

  // --- 8 remote spawns at once, another team (its own link), the connection closed first ------
  await swarmCloseMaster()
  const b0 = performance.now()
  const names = Array.from({ length: PARALLEL }, (_, i) => `burst${i}`)
  const spawns = await Promise.all(names.map((n) => swarm(['spawn', BURST, n, '--host', host.host, '--prompt', `start ${n}`])))
  const ready = await Promise.all(names.map((n) => requestOf(n, `start ${n}`, b0, 90_000)))
  const burstAllReadyMs = ready.includes(undefined) ? undefined : Math.max(...ready)
  const status = await swarm(['status', BURST, '--json'])
  const alive = status.code === 0 ? JSON.parse(status.stdout).members.filter((m) => names.includes(m.name) && m.state !== 'dead').length : 0
  const spawnFailures = spawns.filter((s) => s.code !== 0).map((s) => s.stderr.trim().split('\n').at(-1))

  const overheadReady = remote.readyMs - local.readyMs
  const overheadMsg = remoteMsg.medianMs - localMsg.medianMs
  result = {
    bench: 'remote',
    host: { mode: host.mode, oneWayMs: ONE_WAY_MS, rttMs: 2 * ONE_WAY_MS },
    spawnToReady: { localMs: round(local.readyMs), remoteMs: round(remote.readyMs), remoteOverheadMs: round(overheadReady) },
    spawnReturned: { localMs: round(local.spawnReturnedMs), remoteMs: round(remote.spawnReturnedMs) },
    messageToRequest: {
      localMedianMs: round(localMsg.medianMs),
      remoteMedianMs: round(remoteMsg.medianMs),
      remoteOverheadMs: round(overheadMsg),
      localMs: localMsg.allMs,
      remoteMs: remoteMsg.allMs,
    },
    parallelRemoteSpawns: {
      spawns: PARALLEL,
      exitedZero: PARALLEL - spawnFailures.length,
      ready: ready.filter((x) => x !== undefined).length,
      aliveInOneStatus: alive,
      allReadyMs: round(burstAllReadyMs),
      failures: spawnFailures,
    },
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    targets: {
      // agent-deck #2167: 3.2 s to start remotely plus 1.3 s to attach. Here: the remote start costs
      // at most 2.5 s more than a local one, over a link of 50 ms RTT.
      spawnOverhead: overheadReady <= 2_500,
      // A relayed message: the link's watch, one way over the channel, the relay's write, the
      // agent's watch — at most 4 RTTs more than the local delivery.
      messageOverhead: overheadMsg <= 8 * ONE_WAY_MS,
      // cmux #6734: a cold ControlMaster race lost all but one of 20 attaches.
      parallelAllExitedZero: spawnFailures.length === 0,
      parallelAllReady: burstAllReadyMs !== undefined,
      parallelAllAlive: alive === PARALLEL,
    },
    notes:
      "spawnToReady: `swarm spawn` started → the member's first model request (its prompt); spawnReturned: until the CLI exited. messageToRequest: the lead's send → the model request carrying it, each member idle before (median of 5). The remote member's model calls go from the test host to this machine's loopback model: with the delaying proxy only ssh is delayed, with netem both are. parallelRemoteSpawns: 8 `swarm spawn --host` processes at once after the ControlMaster was closed (each must share one master it did not start), then one `swarm status`.",
  }
} catch (err) {
  console.error(`bench:remote: ${err.stack ?? err}`)
  process.exitCode = 1
} finally {
  for (const t of [TEAM, BURST]) {
    const d = await swarm(['team', 'delete', t, '--force'])
    if (d.code !== 0) console.error(`bench:remote: team delete ${t}: ${d.stderr.trim()}`)
  }
  await swarmCloseMaster()
  await host.stop()
  await server.close()
  fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
}
if (!result) process.exit(1)
console.log(JSON.stringify(result))
if (Object.values(result.targets).includes(false)) process.exitCode = 1

/** Closes the host's ControlMaster (`ssh -O exit` on swarm's control socket): the burst starts cold. */
async function swarmCloseMaster() {
  const dir = path.join(env.SWARM_HOME, 'ssh')
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (f.includes('.')) continue
    await new Promise((resolve) => {
      const c = spawn('ssh', ['-F', host.sshConfig, '-S', path.join(dir, f), '-O', 'exit', 'x'], { stdio: 'ignore' })
      c.on('close', resolve)
    })
  }
}
