#!/usr/bin/env node
// bench:turn — latency from a message sent to an idle teammate to the first request reaching
// the model server. Prints one JSON object as its last line (progress on stderr) with its
// targets; exits 1 when one is missed.
//
// swarm:      a real `swarm agent` child process (event-driven inbox watch) on the loopback model.
// claudeCode: Claude Code's design, measured in the same run: a minimal child process that reads
//             its inbox every 500 ms (Claude Code's poll since 2.1.245) and then calls the model
//             through the same SDK client.
// events:     the same minimal child, one thing changed: woken by swarm's watchInbox instead of the
//             poll. claudeCode → events is what the event-driven watch buys; events → swarm what
//             the whole agent runtime (state, transcript, gate, tools) costs on the way.
// All:        the message is appended with appendMessage (lock + atomic rename); t0 is taken just
//             before that call, t1 when the loopback server has the request body (same clock, this
//             process). After each turn the harness waits for the idle notification, then a random
//             pause (10–60 ms for the event-driven ones; 0–500 ms for the poller so messages land at
//             every phase of its poll).
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (m) => import(path.join(root, 'dist', m))
const { appendMessage, markRead, readInbox } = await dist('mailbox/inbox.js')
const { encodeStructured, parseStructured } = await dist('mailbox/messages.js')
const { inboxPath } = await dist('home/paths.js')

const MESSAGES = 50
const POLL_MS = 500
const TARGETS = { p99Ms: 100, p99VsClaudeCode: 2, eventsP99Ms: 100 }
const TEAM = 'bench'
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const log = (s) => process.stderr.write(`bench:turn: ${s}\n`)

if (process.argv[2] === '--poller') await poller(process.argv[3] ?? 'poll')
else await main()

async function main() {
  const { startLoopbackServer } = await dist('loopback-model/loopback-server.js')
  const { createTeam } = await dist('teams/team-store.js')
  const { ensureTeamKeys } = await dist('trust/keys.js')
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-bench-turn-'))
  const cwd = path.join(base, 'project')
  await fs.mkdir(cwd)
  const reply = { when: {}, text: 'ok', usage: { input_tokens: 10, output_tokens: 1 } }
  const server = await startLoopbackServer({
    scenario: { agents: { alice: { rules: [reply] }, poller: { rules: [reply] }, watcher: { rules: [reply] } } },
  })
  const env = {
    ...process.env,
    HOME: path.join(base, 'user-home'),
    SWARM_HOME: path.join(base, 'home'),
    CLAUDE_CONFIG_DIR: '',
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: server.url,
  }
  await fs.mkdir(env.HOME, { recursive: true })
  delete env.SWARM_LEAD_VERIFY_KEY
  delete env.ANTHROPIC_AUTH_TOKEN
  const children = []
  const loadBefore = Math.round(os.loadavg()[0] * 100) / 100
  try {
    await createTeam(
      {
        name: TEAM,
        cwd,
        members: [
          { name: 'alice', cwd },
          { name: 'poller', cwd },
          { name: 'watcher', cwd },
        ],
      },
      env,
    )
    await ensureTeamKeys(TEAM, env)

    log('swarm: `swarm agent` child, event-driven inbox …')
    const agent = start(children, process.execPath, [path.join(root, 'bin/swarm.js'), 'agent', '--team', TEAM, '--name', 'alice'], env, cwd)
    await waitForState(env, 'alice', 'idle', agent)
    const swarm = await measure(server, env, 'alice', () => 10 + Math.random() * 50, agent)

    log('events: the minimal recipient, woken by watchInbox …')
    const watch = start(children, process.execPath, [fileURLToPath(import.meta.url), '--poller', 'events'], env, cwd)
    await waitForLine(watch, 'ready')
    const events = await measure(server, env, 'watcher', () => 10 + Math.random() * 50, watch)

    log(`claudeCode: the minimal recipient reading its inbox every ${POLL_MS} ms …`)
    const poll = start(children, process.execPath, [fileURLToPath(import.meta.url), '--poller', 'poll'], env, cwd)
    await waitForLine(poll, 'ready')
    const baseline = await measure(server, env, 'poller', () => Math.random() * POLL_MS, poll)

    const checks = {
      p99Ms: percentile(swarm, 99) <= TARGETS.p99Ms,
      p99VsClaudeCode: percentile(baseline, 99) / percentile(swarm, 99) >= TARGETS.p99VsClaudeCode,
      eventsP99Ms: percentile(events, 99) <= TARGETS.eventsP99Ms,
    }
    const result = {
      bench: 'turn',
      messages: MESSAGES,
      p50Ms: round(percentile(swarm, 50)),
      p99Ms: round(percentile(swarm, 99)),
      minMs: round(Math.min(...swarm)),
      maxMs: round(Math.max(...swarm)),
      p99VsClaudeCode: round(percentile(baseline, 99) / percentile(swarm, 99)),
      cpus: os.cpus().length,
      loadAvg1mBefore: loadBefore,
      loadAvg1mAfter: Math.round(os.loadavg()[0] * 100) / 100,
      events: { p50Ms: round(percentile(events, 50)), p99Ms: round(percentile(events, 99)) },
      claudeCode: { p50Ms: round(percentile(baseline, 50)), p99Ms: round(percentile(baseline, 99)), pollMs: POLL_MS },
      targets: TARGETS,
      checks,
      missed: Object.entries(checks)
        .filter(([, ok]) => !ok)
        .map(([k]) => k),
    }
    process.exitCode = result.missed.length ? 1 : 0
    console.log(JSON.stringify(result))
  } finally {
    await Promise.all(children.map(stop))
    await server.close()
    await fs.rm(base, { recursive: true, force: true })
  }
}

/** Sends MESSAGES messages one at a time to an idle recipient; returns the latencies in ms. */
async function measure(server, env, name, pause, child) {
  const file = inboxPath(TEAM, name, env)
  const latencies = []
  let arrived
  server.onRequest = (r) => {
    if (r.path === '/v1/messages' && r.headers['x-swarm-agent'] === name) arrived?.(now())
  }
  for (let i = 0; i < MESSAGES; i++) {
    await sleep(pause())
    const reached = new Promise((resolve) => (arrived = resolve))
    const t0 = now()
    await appendMessage(file, { from: 'team-lead', text: `message ${i}`, summary: `m${i}` })
    const t1 = await withTimeout(reached, 10_000, `request ${i} from ${name}`, child)
    arrived = undefined
    latencies.push(t1 - t0)
    await waitForIdleNotes(env, name, i + 1, child)
  }
  server.onRequest = undefined
  return latencies
}

async function waitForIdleNotes(env, name, count, child) {
  const lead = inboxPath(TEAM, 'team-lead', env)
  const deadline = Date.now() + 10_000
  for (;;) {
    const notes = (await readInbox(lead)).filter((m) => m.from === name && parseStructured(m.text)?.type === 'idle_notification')
    if (notes.length >= count) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${name} to go idle\n${child.output()}`)
    await sleep(5)
  }
}

async function waitForState(env, name, status, child) {
  const file = path.join(env.SWARM_HOME, 'teams', TEAM, 'agents', name, 'state.json')
  const deadline = Date.now() + 15_000
  for (;;) {
    const state = await fs.readFile(file, 'utf8').then(JSON.parse, () => undefined)
    if (state?.status === status) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${name} to be ${status}\n${child.output()}`)
    await sleep(20)
  }
}

async function waitForLine(child, text) {
  const deadline = Date.now() + 15_000
  while (!child.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for "${text}"\n${child.output()}`)
    await sleep(20)
  }
}

function withTimeout(promise, ms, what, child) {
  let timer
  return Promise.race([
    promise,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}\n${child.output()}`)), ms))),
  ]).finally(() => clearTimeout(timer))
}

function start(children, file, args, env, cwd) {
  const child = spawn(file, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const handle = { child, output: () => out.slice(-4000), exited: new Promise((r) => child.once('exit', r)) }
  children.push(handle)
  return handle
}

async function stop(handle) {
  const { child } = handle
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000)
  await handle.exited
  clearTimeout(timer)
}

/** Nearest-rank percentile. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

function round(x) {
  return Math.round(x * 10) / 10
}

/**
 * The minimal recipient: `poll` reads its inbox every POLL_MS (Claude Code's design); `events` is
 * woken by watchInbox. Unread messages are marked read and sent to the model in one streaming
 * request (the same SDK client the agent uses); then it writes an idle notification to team-lead.
 */
async function poller(mode) {
  const { createModelClient } = await dist('agent/client.js')
  const { watchInbox } = await dist('mailbox/watch.js')
  const env = process.env
  const client = createModelClient(env)
  const name = mode === 'events' ? 'watcher' : 'poller'
  const file = inboxPath(TEAM, name, env)
  const lead = inboxPath(TEAM, 'team-lead', env)
  const messages = []
  let busy = false
  let again = false
  const tick = async () => {
    if (busy) {
      again = true
      return
    }
    busy = true
    try {
      const unread = (await readInbox(file)).filter((m) => !m.read)
      if (unread.length === 0) return
      await markRead(file, { msgIds: unread.map((m) => m.msg_id) })
      messages.push({
        role: 'user',
        content: unread.map((m) => `<teammate-message teammate_id="${m.from}">\n${m.text}\n</teammate-message>`).join('\n\n'),
      })
      const stream = client.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 1024, messages }, { headers: { 'x-swarm-agent': name } })
      const final = await stream.finalMessage()
      messages.push({ role: 'assistant', content: final.content })
      const note = { type: 'idle_notification', from: name, timestamp: new Date().toISOString(), idleReason: 'available' }
      await appendMessage(lead, { from: name, text: encodeStructured(note) })
    } finally {
      busy = false
      if (again && mode === 'events') {
        again = false
        void tick().catch((err) => process.stderr.write(`${name}: ${err.message}\n`))
      }
    }
  }
  const run = () => void tick().catch((err) => process.stderr.write(`${name}: ${err.message}\n`))
  const stopWatch =
    mode === 'events' ? watchInbox(TEAM, name, () => run(), { env, includeRead: false }) : { close: () => undefined, ready: Promise.resolve() }
  await stopWatch.ready
  const timer = mode === 'events' ? undefined : setInterval(run, POLL_MS)
  process.once('SIGTERM', () => {
    clearInterval(timer)
    void stopWatch.close()
    process.exit(0)
  })
  process.stdout.write('ready\n')
}
