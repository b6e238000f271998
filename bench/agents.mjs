// Agent CLI delivery benchmark: for each installed CLI (codex, gemini, opencode, pi, qwen; installed by
// scripts/install-agent-clis.mjs; or only those named: npm run bench:agents -- qwen), a real teammate in a real tmux pane against the loopback model.
// swarm's way: MESSAGES messages through the inbox, delivered by the courier (idle-gated bracketed
// paste, Enter after the settle delay — opencode: its /tui/append-prompt + /tui/submit-prompt —
// confirmed by the prompt-submit hook or event, retried, never twice).
// Baseline, same run, same pane: the naive way peers use — `tmux send-keys -l <text>` then Enter
// at once, one message every NAIVE_GAP_MS, no confirmation. Counted on the model server's log:
//   submittedMs: message sent → the model server receives the prompt holding it (p50/p95)
//   stateMs: the CLI's turn starts (model request) / ends (reply served) → swarm's state file says so
//   lost / duplicated: messages submitted zero times / more than once.
// Prints one JSON object as its last line (progress on stderr). Run: npm run bench:agents
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startAgentApiServer } from '../dist/loopback-model/agent-api-server.js'

const run = promisify(execFile)
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(REPO, 'bin/swarm.js')
const MESSAGES = 10
const NAIVE_GAP_MS = 1_500
const CACHE = process.env.SWARM_AGENT_CLI_CACHE || path.join(os.homedir(), '.cache', 'swarm', 'agent-clis')
const BIN_DIR = path.join(CACHE, 'node_modules', '.bin')
const ALL_CLIS = ['codex', 'gemini', 'opencode', 'pi', 'qwen']
const CLIS = process.argv.length > 2 ? process.argv.slice(2) : ALL_CLIS

const log = (s) => process.stderr.write(`${s}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const pct = (xs, p) => {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))])
}

function message(tag, k) {
  const id = `${tag}-${k}-${Math.random().toString(36).slice(2, 8)}`
  return k % 3 === 0 ? `/${id} slash-leading\nsecond line` : k % 3 === 1 ? `${id} ünïcødé 😀` : `${id} ${'long text '.repeat(200)}`
}

async function waitFor(fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) return undefined
    await sleep(10)
  }
}

async function benchCli(cli) {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), `swarm-bench-${cli}-`))
  for (const d of ['home', 'work', 'tmux', 'user', 'tmpdir']) await fsp.mkdir(path.join(dir, d))
  const server = await startAgentApiServer({})
  const socket = `swarm-bench-${process.pid}-${cli}`
  const env = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    HOME: path.join(dir, 'user'),
    TMPDIR: path.join(dir, 'tmpdir'),
    SWARM_HOME: path.join(dir, 'home'),
    TMUX_TMPDIR: path.join(dir, 'tmux'),
    SWARM_TMUX_SOCKET: socket,
    SWARM_AGENT_BIN_DIR: BIN_DIR,
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: 'bench',
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_API_KEY: 'bench',
    NO_COLOR: '1',
  }
  const swarm = (args) => run(process.execPath, [BIN, ...args], { env, cwd: path.join(dir, 'work'), maxBuffer: 8 << 20 })
  const stateFile = path.join(dir, 'home', 'teams', 'b', 'agents', 'mate', 'state.json')
  const status = async () => JSON.parse(await fsp.readFile(stateFile, 'utf8').catch(() => '{}')).status
  const v = await run(path.join(BIN_DIR, cli), ['--version'], { env }).catch((e) => e)
  const version = (v.stdout?.trim() || v.stderr?.trim() || '').split('\n').pop()
  try {
    await swarm(['team', 'create', 'b', '--no-start'])
    await swarm(['spawn', 'b', 'mate', '--agent', cli, '--model', 'loopback', '--backend', 'tmux', '--prompt', 'warm up'])
    if (!(await waitFor(async () => (await status()) === 'idle', 90_000))) throw new Error(`${cli} never became idle`)
    const pane = JSON.parse(await fsp.readFile(path.join(dir, 'home', 'teams', 'b', 'config.json'), 'utf8')).members.find(
      (m) => m.name === 'mate',
    ).tmuxPaneId

    // State visibility: every status change, polled every 10 ms, against the server's turn times.
    const changes = []
    let last
    const poll = setInterval(async () => {
      const s = await status()
      if (s && s !== last) {
        last = s
        changes.push({ s, at: Date.now() })
      }
    }, 10)

    log(`${cli}: swarm delivery`)
    const ours = []
    for (let k = 0; k < MESSAGES; k++) {
      const text = message('ours', k)
      const needle = text.match(/ours-\d+-\w+/)[0]
      const sentAt = Date.now()
      await swarm(['send', 'b', 'mate', text])
      const hit = await waitFor(() => server.submissionsOf(needle)[0], 30_000)
      ours.push({ needle, ms: hit ? hit.receivedAt - sentAt : undefined })
      await waitFor(async () => (await status()) === 'idle', 30_000)
    }
    clearInterval(poll)
    const stateMs = []
    for (const r of server.requests.filter((r) => !r.aux && r.view?.lastUser?.includes('ours-'))) {
      const working = changes.find((c) => c.s === 'working' && c.at >= r.receivedAt - 2_000)
      if (working) stateMs.push(Math.max(0, working.at - r.receivedAt))
      const idle = changes.find((c) => c.s === 'idle' && c.at >= r.receivedAt)
      if (idle) stateMs.push(idle.at - r.receivedAt)
    }

    log(`${cli}: naive send-keys + Enter`)
    const naive = []
    const tmux = (args) => run('tmux', ['-L', socket, ...args], { env })
    for (let k = 0; k < MESSAGES; k++) {
      const text = message('naive', k)
      const needle = text.match(/naive-\d+-\w+/)[0]
      naive.push({ needle, sentAt: Date.now() })
      await tmux(['send-keys', '-t', pane, '-l', text])
      await tmux(['send-keys', '-t', pane, 'Enter'])
      await sleep(NAIVE_GAP_MS)
    }
    await sleep(10_000)
    const count = (list) => list.map((m) => server.submissionsOf(m.needle).length)
    const oursCounts = count(ours)
    const naiveCounts = count(naive)
    const naiveMs = naive.map((m) => server.submissionsOf(m.needle)[0]?.receivedAt - m.sentAt).filter((x) => Number.isFinite(x))
    return {
      version,
      swarm: {
        messages: MESSAGES,
        submittedMs: { p50: pct(ours.map((o) => o.ms).filter(Number.isFinite), 50), p95: pct(ours.map((o) => o.ms).filter(Number.isFinite), 95) },
        stateMs: { p50: pct(stateMs, 50), p95: pct(stateMs, 95), samples: stateMs.length },
        lost: oursCounts.filter((n) => n === 0).length,
        duplicated: oursCounts.filter((n) => n > 1).length,
      },
      naive: {
        messages: MESSAGES,
        gapMs: NAIVE_GAP_MS,
        submittedMs: { p50: pct(naiveMs, 50), p95: pct(naiveMs, 95) },
        lost: naiveCounts.filter((n) => n === 0).length,
        duplicated: naiveCounts.filter((n) => n > 1).length,
      },
    }
  } finally {
    const pids = (await run('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_pid}'], { env }).catch(() => ({ stdout: '' }))).stdout
      .split('\n')
      .filter(Boolean)
      .map(Number)
    await swarm(['team', 'delete', 'b', '--force']).catch(() => undefined)
    await run('tmux', ['-L', socket, 'kill-server'], { env }).catch(() => undefined)
    for (const n of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try {
        const st = fs.readFileSync(`/proc/${n}/stat`, 'utf8')
        if (pids.includes(Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[3]))) process.kill(Number(n), 'SIGKILL')
      } catch {
        // gone
      }
    }
    await server.close()
    await fsp.rm(dir, { recursive: true, force: true })
  }
}

async function main() {
  const unknown = CLIS.filter((c) => !ALL_CLIS.includes(c))
  if (unknown.length) throw new Error(`unknown CLI ${unknown.join(', ')}: choose from ${ALL_CLIS.join(', ')}`)
  const result = { bench: 'agents', messagesPerCli: MESSAGES, clis: {} }
  for (const cli of CLIS) {
    if (!fs.existsSync(path.join(BIN_DIR, cli))) {
      result.clis[cli] = { skipped: `not installed in ${BIN_DIR}` }
      continue
    }
    try {
      result.clis[cli] = await benchCli(cli)
    } catch (err) {
      result.clis[cli] = { error: String(err.message ?? err) }
    }
  }
  console.log(JSON.stringify(result))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
