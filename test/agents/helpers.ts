import { execFile } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { type AgentApiServer, startAgentApiServer } from '../../src/loopback-model/agent-api-server.js'
import type { AgentScriptInput } from '../../src/loopback-model/agent-script.js'
import { userHomeEnv } from '../support/home.js'

const run = promisify(execFile)
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BIN = path.join(REPO, 'bin/swarm.js')

/** Where `npm run test:agents` installed the pinned CLIs (scripts/install-agent-clis.mjs). */
export function agentBinDir(): string {
  const cache = process.env.SWARM_AGENT_CLI_CACHE || path.join(os.homedir(), '.cache', 'swarm', 'agent-clis')
  return path.join(cache, 'node_modules', '.bin')
}

export function hasCli(bin: string): boolean {
  return fs.existsSync(path.join(agentBinDir(), bin))
}

export interface AgentTeam {
  dir: string
  home: string
  work: string
  env: NodeJS.ProcessEnv
  server: AgentApiServer
  socket: string
  swarm(args: string[], opts?: { input?: string }): Promise<{ stdout: string; stderr: string; code: number }>
  cleanup(): Promise<void>
}

/**
 * A temp SWARM_HOME, HOME, work dir, an isolated tmux server (its own TMUX_TMPDIR) and a loopback
 * agent-API server; provider variables point every CLI at the server, never at a real service.
 */
export async function agentTeam(script: AgentScriptInput = {}): Promise<AgentTeam> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'swarm-agents-'))
  const home = path.join(dir, 'swarm-home')
  const work = path.join(dir, 'work')
  await Promise.all(['swarm-home', 'work', 'tmux', 'tmpdir'].map((d) => fsp.mkdir(path.join(dir, d))))
  const server = await startAgentApiServer({ script })
  const socket = `swarm-agents-${process.pid}-${path.basename(dir)}`
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    NO_COLOR: '1',
    // HOME, its XDG dirs and the git identity of the test's own (test/support/home.ts).
    ...userHomeEnv(dir),
    // Codex refuses to set up its sandbox helper under the temp dir: its home here is not under this one.
    TMPDIR: path.join(dir, 'tmpdir'),
    SWARM_HOME: home,
    TMUX_TMPDIR: path.join(dir, 'tmux'),
    SWARM_TMUX_SOCKET: socket,
    SWARM_AGENT_BIN_DIR: agentBinDir(),
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: 'loopback-key',
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_API_KEY: 'loopback-key',
    ANTHROPIC_API_KEY: '',
    // The run's own cgroup root (test/support/run-isolation.ts), so its member cgroups go with the run.
    ...(process.env.SWARM_CGROUP_ROOT && { SWARM_CGROUP_ROOT: process.env.SWARM_CGROUP_ROOT }),
  }
  const swarm = async (args: string[], opts: { input?: string } = {}) => {
    try {
      const r = await run(process.execPath, [BIN, ...args], { env, cwd: work, maxBuffer: 16 * 1024 * 1024, ...(opts.input !== undefined && {}) })
      return { stdout: r.stdout, stderr: r.stderr, code: 0 }
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number }
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 }
    }
  }
  return {
    dir,
    home,
    work,
    env,
    server,
    socket,
    swarm,
    async cleanup() {
      if (process.env.SWARM_AGENTS_DUMP) await dump(env, socket, home, process.env.SWARM_AGENTS_DUMP)
      // Every process of every pane of this tmux server: listed before the server goes away.
      const pids = await panePids(env, socket)
      await run('tmux', ['-L', socket, 'kill-server'], { env }).catch(() => undefined)
      const left = await leftovers(pids)
      for (const pid of left) killQuietly(pid)
      await server.close()
      await fsp.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
    },
  }
}

/** The session ids of the panes (each pane's command leads its session). */
export async function panePids(env: NodeJS.ProcessEnv, socket: string, paneId?: string): Promise<number[]> {
  const r = await run('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_id} #{pane_pid}'], { env }).catch(() => ({ stdout: '' }))
  const rows = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '))
  return rows.filter(([id]) => paneId === undefined || id === paneId).map(([, pid]) => Number(pid))
}

/** Live processes in the sessions of `sids` (what a pane left behind). */
export async function leftovers(sids: number[]): Promise<number[]> {
  if (!sids.length) return []
  const out: number[] = []
  for (const n of await fsp.readdir('/proc')) {
    if (!/^\d+$/.test(n)) continue
    try {
      const stat = await fsp.readFile(`/proc/${n}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (f[0] !== 'Z' && sids.includes(Number(f[3]))) out.push(Number(n))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone already
  }
}

export async function agentState(t: AgentTeam, name: string): Promise<{ status?: string; since?: number } | undefined> {
  try {
    return JSON.parse(await fsp.readFile(path.join(t.home, 'teams', 't', 'agents', name, 'state.json'), 'utf8'))
  } catch {
    return undefined
  }
}

/** Records every status change of `name` (polled every 20 ms) until stopped. */
export function watchStates(t: AgentTeam, name: string): { changes: Array<{ status: string; at: number }>; stop(): void } {
  const changes: Array<{ status: string; at: number }> = []
  let last: string | undefined
  const timer = setInterval(() => {
    void agentState(t, name).then((s) => {
      if (s?.status && s.status !== last) {
        last = s.status
        changes.push({ status: s.status, at: Date.now() })
      }
    })
  }, 20)
  return { changes, stop: () => clearInterval(timer) }
}

export async function inboxOf(t: AgentTeam, name: string): Promise<Array<{ from: string; text: string }>> {
  try {
    return JSON.parse(await fsp.readFile(path.join(t.home, 'teams', 't', 'inboxes', `${name}.json`), 'utf8'))
  } catch {
    return []
  }
}

/** The 20 messages of the delivery check: multi-line, `/`- and `@`-leading, 10 kB, unicode. */
export function deliveryMessages(tag: string): string[] {
  const out: string[] = []
  for (let k = 0; k < 20; k++) {
    const id = `m${k}-${tag}`
    if (k % 5 === 0) out.push(`/${id} starts with a slash\nand has a second line`)
    else if (k % 5 === 1) out.push(`@${id} starts with an at sign`)
    else if (k % 5 === 2) out.push(`${id} unicode: ünïcødé — 日本語 — 😀 — ∑`)
    else if (k % 5 === 3) out.push(`${id} long: ${'lorem ipsum dolor sit amet '.repeat(380)}end-${id}`)
    else out.push(`${id} line one\nline two\n\nline four after a blank`)
  }
  return out
}

/** Debugging aid (SWARM_AGENTS_DUMP=<file>): every pane's screen and every courier log, before cleanup. */
async function dump(env: NodeJS.ProcessEnv, socket: string, home: string, file: string): Promise<void> {
  const panes = await run('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_id}'], { env }).catch(() => ({ stdout: '' }))
  let out = ''
  for (const id of panes.stdout.split('\n').filter(Boolean)) {
    const screen = await run('tmux', ['-L', socket, 'capture-pane', '-p', '-S', '-200', '-t', id], { env }).catch(() => ({ stdout: '' }))
    out += `=== pane ${id}\n${screen.stdout}\n`
  }
  const agents = path.join(home, 'teams', 't', 'agents')
  for (const a of await fsp.readdir(agents).catch(() => [] as string[])) {
    for (const f of ['courier.log', 'hook-log.jsonl', 'state.json'])
      out += `=== ${a}/${f}\n${await fsp.readFile(path.join(agents, a, f), 'utf8').catch(() => '')}\n`
  }
  await fsp.writeFile(file, out)
}

/** The teammate's hook log (what `swarm hook` recorded, with times). */
export async function hookLog(t: AgentTeam, name: string): Promise<Array<{ event: string; at: number; digest?: string }>> {
  const text = await fsp.readFile(path.join(t.home, 'teams', 't', 'agents', name, 'hook-log.jsonl'), 'utf8').catch(() => '')
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; at: number; digest?: string })
}

/**
 * The Claude Code binary for agent tests: SWARM_CLAUDE_BIN (scripts/interop.mjs sets it), else the
 * one scripts/interop.mjs cached ($SWARM_TEST_CACHE or node_modules/.cache/swarm-interop); undefined when absent.
 */
export function claudeBinForTests(): string | undefined {
  if (process.env.SWARM_CLAUDE_BIN) return fs.existsSync(process.env.SWARM_CLAUDE_BIN) ? process.env.SWARM_CLAUDE_BIN : undefined
  const cache = path.resolve(process.env.SWARM_TEST_CACHE || path.join(REPO, 'node_modules', '.cache', 'swarm-interop'))
  const dirs = fs.existsSync(cache) ? fs.readdirSync(cache).filter((d) => d.startsWith('claude-code-')) : []
  return dirs.map((d) => path.join(cache, d, 'package', 'claude')).find((f) => fs.existsSync(f))
}

export interface PendingRequest {
  id: string
  agent: string
  toolName?: string
  input: Record<string, unknown>
  suggestions?: unknown[]
}

/** What `swarm perms t --json` lists. */
export async function pendingRequests(t: AgentTeam): Promise<PendingRequest[]> {
  const r = await t.swarm(['perms', 't', '--json'])
  return (JSON.parse(r.stdout || '{"requests":[]}') as { requests: PendingRequest[] }).requests
}

/** `swarm spawn t <name>` of the real CLI `kind` in tmux on the loopback model, with `more` (e.g. `--worktree`, `--max-cost`) and its first prompt. */
export function cliSpawnArgs(name: string, kind: string, prompt: string, more: readonly string[] = []): string[] {
  return ['spawn', 't', name, ...more, '--agent', kind, '--model', 'loopback', '--backend', 'tmux', '--prompt', prompt]
}

/** Team `t` (not started), then `name` spawned in tmux running the real CLI `kind` on the loopback model. */
export async function spawnCliTeammate(t: AgentTeam, name: string, kind: string): Promise<void> {
  const created = await t.swarm(['team', 'create', 't', '--no-start'])
  if (created.code !== 0) throw new Error(`team create: ${created.stderr}`)
  const spawned = await t.swarm(cliSpawnArgs(name, kind, 'FIRST say hello'))
  if (spawned.stderr !== '') throw new Error(`spawn ${name}: ${spawned.stderr}`)
}
