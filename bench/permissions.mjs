#!/usr/bin/env node
// bench:permissions — a permission request from a teammate to the prompt on the lead's screen, as
// a user meets it: a real team (`swarm team create --backend tmux`, in a tmux server of its own),
// a real `swarm agent` teammate in default mode on the loopback model making ROUNDS Bash calls,
// the real leader console in its pane. For each call the bench reads the leader pane
// (`tmux capture-pane`) until the prompt for that command is on screen, then answers it as the
// user does (`y` Enter into the pane) and waits for the teammate's next model request (the tool
// result: the command ran).
//
// Baseline, the same requests in the same run: Claude Code as the lead sees a teammate's
// permission_request when it next polls its inbox (every 500 ms since 2.1.245); a 500 ms poller
// of team-lead's inbox records when that would have been.
//
// shownMs:          the model's tool_use served → the prompt on the leader's screen.
// claudeCodeSeenMs: the model's tool_use served → the 500 ms poll that would have found it.
// resumeMs:         `y` Enter typed → the teammate's next model request.
// Prints one JSON object as its last line (progress on stderr) with its targets; exits 1 when one
// is missed. Run: npm run bench:permissions
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(root, 'bin/swarm.js')
const { startLoopbackServer } = await import(path.join(root, 'dist/loopback-model/loopback-server.js'))
const { readInbox } = await import(path.join(root, 'dist/mailbox/inbox.js'))
const { inboxPath } = await import(path.join(root, 'dist/home/paths.js'))

const ROUNDS = Number(process.env.BENCH_PERMISSIONS_ROUNDS ?? 20)
const TEAM = 'bench'
const CLAUDE_POLL_MS = 500
/** How often the bench looks at the leader's screen (each look is one `tmux capture-pane`). */
const LOOK_MS = 5
const TARGETS = { shownP50Ms: 250, shownP95Ms: 600, shownP50VsClaudeCode: 1.5, resumeP50Ms: 300, commandsRun: ROUNDS }

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const command = (i) => `echo ${i} >> count.txt`

const steps = Array.from({ length: ROUNDS }, (_, i) => ({
  content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: command(i) } }],
  ...(i === 0 ? { when: { lastUserIncludes: 'count to' } } : {}),
}))
const server = await startLoopbackServer({ scenario: { agents: { alice: { steps: [...steps, { text: 'done' }] } }, fallback: { text: 'ok' } } })
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bench-perms-')))
const env = { ...process.env, HOME: path.join(base, 'user-home'), SWARM_HOME: path.join(base, 'home'), TMUX_TMPDIR: path.join(base, 'tmux') }
for (const k of ['TMUX', 'TMUX_PANE', 'SWARM_TMUX_SOCKET', 'SWARM_TEAM', 'SWARM_AGENT_ID', 'SWARM_TEAM_DIR', 'SWARM_LEAD_VERIFY_KEY']) delete env[k]
Object.assign(env, { ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' })
const project = path.join(base, 'project')
for (const d of [env.HOME, env.TMUX_TMPDIR, project]) fs.mkdirSync(d, { recursive: true })
const tmux = (...a) => execFileSync('tmux', ['-L', 'swarm', ...a], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
const swarm = (...a) => {
  const r = spawnSync(process.execPath, [BIN, ...a], { env, cwd: project, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`swarm ${a.join(' ')} exited ${r.status}: ${r.stderr}`)
  return r.stdout
}
const aliceRequests = () => server.requests.filter((r) => r.agent === 'alice' && r.path === '/v1/messages')

const loadBefore = os.loadavg().map((x) => Math.round(x * 10) / 10)
let exitCode = 1
try {
  swarm('team', 'create', TEAM, '--agents', 'alice', '--backend', 'tmux', '--mode', 'default', '--no-attach', '--cwd', project)
  await until('alice idle', () => readJson(path.join(env.SWARM_HOME, 'teams', TEAM, 'agents', 'alice', 'state.json'))?.status === 'idle', 60_000)
  const leader = leaderPane()
  await until('the leader console', () => screen(leader).trim().length > 0, 30_000)

  // Claude Code's view: its 500 ms poll of team-lead's inbox, from a phase of its own.
  const polledAt = new Map() // command → when the poll found its request
  const lead = inboxPath(TEAM, 'team-lead', env)
  const poll = setInterval(async () => {
    const at = Date.now()
    for (const m of await readInbox(lead).catch(() => [])) {
      const cmd = /"command":"([^"]*)"/.exec(m.text)?.[1]
      if (cmd && m.text.includes('permission_request') && !polledAt.has(cmd)) polledAt.set(cmd, at)
    }
  }, CLAUDE_POLL_MS)

  const samples = []
  swarm('send', TEAM, 'alice', 'count to twenty, one Bash call at a time')
  for (let i = 0; i < ROUNDS; i++) {
    // Request i+1 of alice's (after the start) was answered with the tool_use of command i.
    await until(`the tool_use of round ${i}`, () => aliceRequests().length >= i + 1, 60_000)
    const servedAt = aliceRequests()[i].receivedAt
    await until(
      `the prompt of round ${i} on the leader's screen`,
      () => prompted(screen(leader), command(i)),
      60_000,
      LOOK_MS,
      () => screen(leader),
    )
    const shownAt = Date.now()
    let answeredAt = Date.now()
    tmux('send-keys', '-t', leader, 'y', 'Enter')
    // A key the console refused (a prompt that had just replaced another) is typed again.
    for (let tries = 0; aliceRequests().length < i + 2; tries++) {
      if (tries > 0 && tries % 400 === 0) {
        answeredAt = Date.now()
        tmux('send-keys', '-t', leader, 'y', 'Enter')
      }
      if (tries > 4_000) throw new Error(`round ${i}: no request after the approval\n${screen(leader)}`)
      await sleep(5)
    }
    const resumedAt = aliceRequests()[i + 1].receivedAt
    samples.push({ servedAt, shownAt, answeredAt, resumedAt, command: command(i) })
    process.stderr.write(`\r${i + 1}/${ROUNDS}`)
  }
  process.stderr.write('\n')
  await sleep(CLAUDE_POLL_MS + 100)
  clearInterval(poll)

  const shown = samples.map((s) => s.shownAt - s.servedAt)
  const claudeCode = samples.map((s) => (polledAt.get(s.command) ?? NaN) - s.servedAt).filter(Number.isFinite)
  const resume = samples.map((s) => s.resumedAt - s.answeredAt)
  const commandsRun = fs.readFileSync(path.join(project, 'count.txt'), 'utf8').split('\n').filter(Boolean).length
  const result = {
    bench: 'permissions',
    rounds: ROUNDS,
    commandsRun,
    shownMs: stats(shown),
    claudeCodeSeenMs: { ...stats(claudeCode), pollMs: CLAUDE_POLL_MS },
    resumeMs: stats(resume),
    shownP50VsClaudeCode: round(pct(claudeCode, 50) / pct(shown, 50)),
    machine: { cores: os.availableParallelism(), loadavgBefore: loadBefore, loadavgAfter: os.loadavg().map((x) => Math.round(x * 10) / 10) },
    targets: TARGETS,
  }
  result.checks = {
    shownP50Ms: result.shownMs.p50 <= TARGETS.shownP50Ms,
    shownP95Ms: result.shownMs.p95 <= TARGETS.shownP95Ms,
    shownP50VsClaudeCode: result.shownP50VsClaudeCode >= TARGETS.shownP50VsClaudeCode,
    resumeP50Ms: result.resumeMs.p50 <= TARGETS.resumeP50Ms,
    commandsRun: commandsRun === TARGETS.commandsRun,
  }
  result.missed = Object.entries(result.checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k)
  console.log(JSON.stringify(result))
  exitCode = result.missed.length ? 1 : 0
} catch (err) {
  process.stderr.write(`bench:permissions: ${err?.stack ?? err}\n`)
} finally {
  spawnSync(process.execPath, [BIN, 'team', 'delete', TEAM, '--timeout', '10'], { env, cwd: project, stdio: 'ignore' })
  try {
    tmux('kill-server')
  } catch {
    // the delete closed it
  }
  await server.close()
  await sleep(500) // the teammate's last writes after its pane closed
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
}
process.exit(exitCode)

/** The pane running `swarm leader`. */
function leaderPane() {
  const panes = tmux('list-panes', '-a', '-F', '#{pane_id}\t#{pane_start_command}').trim().split('\n')
  const line = panes.find((l) => /\bleader\b/.test(l.split('\t')[1] ?? ''))
  if (!line) throw new Error(`no leader pane among:\n${panes.join('\n')}`)
  return line.split('\t')[0]
}

function screen(pane) {
  try {
    return tmux('capture-pane', '-p', '-J', '-t', pane)
  } catch {
    return ''
  }
}

/** The console's prompt for `cmd`: its request line, then the keys to answer it. */
function prompted(text, cmd) {
  const at = text.lastIndexOf(`wants to use Bash: ${cmd}`)
  return at >= 0 && text.indexOf('[y] approve once', at) > at
}

async function until(what, check, ms, every = 20, show = () => '') {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${show()}`)
    await sleep(every)
  }
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]
}

function stats(xs) {
  return { p50: round(pct(xs, 50)), p95: round(pct(xs, 95)), max: round(Math.max(...xs)), n: xs.length }
}

function round(x) {
  return Math.round(x * 10) / 10
}
