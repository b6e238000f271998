import { readFileSync } from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { spawn, type ChildProcess } from 'node:child_process'
import { createOutput } from '../../src/agent/render.js'
import type { TeammateRuntime } from '../../src/agent/runtime.js'
import { assembleAgent, type StartAgentOptions } from '../../src/agent/start.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { parseStructured, type StructuredMessage } from '../../src/mailbox/messages.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import type { LoopbackServer, RecordedRequest } from '../../src/loopback-model/loopback-server.js'
import { ensureTeamKeys } from '../../src/mailbox/signing.js'
import { inboxPath, LEAD_NAME } from '../../src/home/paths.js'
import { createTeam, type NewMember } from '../../src/teams/team-store.js'
import { isolatedHome } from '../support/home.js'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const BIN = path.join(REPO, 'bin/swarm.js')
export const TEAM = 'rt'

/** A temp SWARM_HOME holding team `rt` (team-lead + the given members) with its lead key. */
export interface Fixture {
  base: string
  home: string
  cwd: string
  env: NodeJS.ProcessEnv
  cleanup(): Promise<void>
}

export async function makeFixture(loopback: LoopbackServer, members: NewMember[] = [{ name: 'alice' }]): Promise<Fixture> {
  const { base, home, project: cwd, env, cleanup } = isolatedHome('swarm-rt-', { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: loopback.url })
  await createTeam({ name: TEAM, cwd, members: members.map((m) => ({ cwd, ...m })) }, env)
  await ensureTeamKeys(TEAM, env)
  return { base, home, cwd, env, cleanup }
}

/** An in-process teammate built with assembleAgent, its pane output collected. */
export interface TestAgent {
  runtime: TeammateRuntime
  model: string
  tools: string[]
  done: Promise<number>
  /** True once run() has settled (checked without waiting for it). */
  settled(): boolean
  out(): string
  stop(): Promise<number>
}

export async function startAgent(fx: Fixture, name: string, options: Partial<StartAgentOptions> = {}): Promise<TestAgent> {
  const abort = new AbortController()
  const stream = new PassThrough()
  let buf = ''
  stream.on('data', (d: Buffer) => (buf += d.toString()))
  const { runtime, model, tools } = await assembleAgent({
    team: TEAM,
    name,
    env: fx.env,
    output: createOutput({ stream, color: false }),
    signal: abort.signal,
    ...options,
  })
  let settled = false
  const done = runtime.run().finally(() => (settled = true))
  return {
    runtime,
    model,
    tools,
    done,
    settled: () => settled,
    out: () => buf,
    stop: () => {
      abort.abort()
      return done
    },
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export function inbox(fx: Fixture, name: string): Promise<InboxMessage[]> {
  return readInbox(inboxPath(TEAM, name, fx.env))
}

/** Synchronous read (for loopback onRequest hooks, which must not await). */
export function inboxSync(fx: Fixture, name: string): InboxMessage[] {
  try {
    return JSON.parse(readFileSync(inboxPath(TEAM, name, fx.env), 'utf8')) as InboxMessage[]
  } catch {
    return []
  }
}

/** Structured messages in team-lead's inbox, optionally of one type and from one sender. */
export async function leadStructured<T extends StructuredMessage['type']>(
  fx: Fixture,
  type: T,
  from?: string,
): Promise<Array<Extract<StructuredMessage, { type: T }>>> {
  const all = await inbox(fx, LEAD_NAME)
  return all
    .filter((m) => from === undefined || m.from === from)
    .map((m) => parseStructured(m.text))
    .filter((s): s is Extract<StructuredMessage, { type: T }> => s?.type === type)
}

/** The /v1/messages requests an agent made, in order. */
export function modelRequests(loopback: LoopbackServer, agent?: string): RecordedRequest[] {
  return loopback.requests.filter((r) => r.path === '/v1/messages' && (agent === undefined || r.headers['x-swarm-agent'] === agent))
}

type Block = { type: string; text?: string; content?: unknown; tool_use_id?: string; is_error?: boolean }
type Msg = { role: string; content: string | Block[] }

export function requestMessages(r: RecordedRequest): Msg[] {
  return ((r.body as { messages?: Msg[] } | undefined)?.messages ?? []) as Msg[]
}

/** All the text of a message (string content or its text blocks). */
export function messageText(m: Msg | undefined): string {
  if (!m) return ''
  if (typeof m.content === 'string') return m.content
  return m.content.flatMap((b) => (b.type === 'text' && b.text ? [b.text] : [])).join('\n')
}

/** The tool_result blocks of every request an agent sent, by tool_use_id. */
export function toolResults(loopback: LoopbackServer, agent?: string): Map<string, { content: string; isError: boolean }> {
  const out = new Map<string, { content: string; isError: boolean }>()
  for (const r of modelRequests(loopback, agent)) {
    for (const m of requestMessages(r)) {
      if (typeof m.content === 'string') continue
      for (const b of m.content) {
        if (b.type === 'tool_result' && b.tool_use_id) {
          out.set(b.tool_use_id, { content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content), isError: b.is_error === true })
        }
      }
    }
  }
  return out
}

/** True once `pid` is gone (or only a zombie waiting for a reaper). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return true
  }
}

/** A `swarm agent` child process (the built CLI), its output kept for failure reports. */
export interface ChildAgent {
  child: ChildProcess
  output(): string
  exited: Promise<number | null>
  kill(signal?: NodeJS.Signals): Promise<number | null>
}

export function startChildAgent(fx: Fixture, name: string, args: string[] = []): ChildAgent {
  const child = spawn(process.execPath, [BIN, 'agent', '--team', TEAM, '--name', name, ...args], {
    env: fx.env,
    cwd: fx.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    output: () => out,
    exited,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
