import { readFileSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { createOutput } from '../../../src/agent/render.js'
import type { TeammateRuntime } from '../../../src/agent/runtime.js'
import { assembleAgent, type StartAgentOptions } from '../../../src/agent/start.js'
import { readInbox } from '../../../src/mailbox/inbox.js'
import { parseStructured, type StructuredMessage } from '../../../src/mailbox/messages.js'
import type { InboxMessage } from '../../../src/mailbox/types.js'
import type { LoopbackServer, RecordedRequest } from '../../../src/loopback-model/loopback-server.js'
import { inboxPath, LEAD_NAME } from '../../../src/home/paths.js'
import type { NewMember } from '../../../src/teams/team-store.js'
import { makeTeam, startSwarmAgent, track, type ChildAgent, type Fixture } from '../../support/agent-team.js'

export { BIN, REPO } from '../../support/repo.js'
export type { ChildAgent, Fixture } from '../../support/agent-team.js'
export const TEAM = 'rt'

/** Team `rt` (team-lead + the given members) in a fresh isolated home, on `loopback`. */
export function makeFixture(loopback: LoopbackServer, members: NewMember[] = [{ name: 'alice' }]): Promise<Fixture> {
  return makeTeam(TEAM, loopback, members, 'swarm-rt-')
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
  const stop = () => {
    abort.abort()
    return done
  }
  track(`pane of ${name}`, stop, () => buf)
  return { runtime, model, tools, done, settled: () => settled, out: () => buf, stop }
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

/** `swarm agent --team rt --name <name>` as a child process (the built CLI), stopped after the test. */
export function startChildAgent(fx: Fixture, name: string, args: string[] = []): ChildAgent {
  return startSwarmAgent(fx, TEAM, name, args)
}
