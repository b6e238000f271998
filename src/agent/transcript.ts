import fs from 'node:fs/promises'
import path from 'node:path'
import type Anthropic from '@anthropic-ai/sdk'
import { agentDir } from '../home/paths.js'
import { FILE_MODE, NOFOLLOW, ensureDir, openError, readFileIfExists } from '../util/fs.js'
import { applyClearing } from './compaction/clear-tool-results.js'

type MessageParam = Anthropic.MessageParam

/**
 * One line of `agents/<name>/transcript.jsonl`. `message` events carry the conversation
 * (what --resume rebuilds); the others are for `swarm logs` and post-mortems.
 */
export type TranscriptEvent =
  | { t: string; kind: 'message'; message: MessageParam }
  | {
      t: string
      kind: 'tool'
      tool: string
      /** The input the tool ran with; `requestedInput` is the model's when the approval edited it. */
      input: unknown
      requestedInput?: unknown
      isError: boolean
      output: string
      ms: number
    }
  | { t: string; kind: 'state'; state: string; detail?: string }
  | { t: string; kind: 'error'; errorType: string; status?: number; requestId?: string; message: string }
  | { t: string; kind: 'start'; model: string; mode?: string; resume: boolean; pid: number }
  | {
      t: string
      kind: 'usage'
      model: string
      inputTokens: number
      outputTokens: number
      cacheReadTokens: number
      cacheWriteTokens: number
      cacheWrite1hTokens?: number
    }
  | CompactionEvent

/**
 * A compaction marker. `tool_results_cleared` names the results replaced by notes; `summarized`
 * is followed by the `message` events of the compacted conversation, which --resume starts from.
 */
export type CompactionEvent = {
  t: string
  kind: 'compaction'
  stage: 'tool_results_cleared' | 'summarized' | 'failed'
  trigger: string
  tokensBefore: number
  tokensAfter?: number
  toolUseIds?: string[]
  focus?: string
  reason?: string
}

type WithoutTime<T> = T extends unknown ? Omit<T, 't'> : never
export type NewTranscriptEvent = WithoutTime<TranscriptEvent>

export function transcriptPath(team: string, name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentDir(team, name, env), 'transcript.jsonl')
}

/** Appends events to an agent's transcript (O_APPEND: one writer per agent, lines never torn by a crash mid-line of another). */
export class Transcript {
  private ready: Promise<void> | undefined
  constructor(readonly file: string) {}

  async append(...events: NewTranscriptEvent[]): Promise<void> {
    // Only the first append creates the directory; after the team is deleted, late events are dropped.
    const first = this.ready === undefined
    this.ready ??= ensureDir(path.dirname(this.file))
    await this.ready
    const t = new Date().toISOString()
    const text = events.map((e) => JSON.stringify({ t, ...e })).join('\n') + '\n'
    try {
      await fs.appendFile(this.file, text, { mode: FILE_MODE, flag: NOFOLLOW.append })
    } catch (err) {
      if (first || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw openError(this.file, err) // a symbolic link: refused
    }
  }
}

/** Reads a transcript; a torn last line (a crash mid-write) is skipped, other lines that are not events too. */
export async function readTranscript(file: string): Promise<TranscriptEvent[]> {
  const text = await readFileIfExists(file)
  if (!text) return []
  const events: TranscriptEvent[] = []
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      const e = JSON.parse(line) as TranscriptEvent
      // Valid JSON is not yet an event (a hand-edited or foreign line): every reader relies on these.
      if (typeof e?.t === 'string' && typeof e.kind === 'string' && (e.kind !== 'message' || typeof e.message?.role === 'string')) events.push(e)
    } catch {
      // A line torn by a crash: the rest of the transcript is still good.
    }
  }
  return events
}

/**
 * Rebuilds the conversation for --resume: the `message` events in order (from the last
 * compaction on, with cleared tool results cleared again), cut back so it ends in a consistent state (no assistant tool_use without its tool_result, alternating roles).
 */
export function rebuildConversation(events: TranscriptEvent[]): MessageParam[] {
  const messages: MessageParam[] = []
  for (const e of events) {
    if (e.kind === 'compaction') {
      // The full history stays in the file; the conversation restarts from the compacted state.
      if (e.stage === 'summarized') messages.length = 0
      if (e.stage === 'tool_results_cleared') applyClearing(messages, e.toolUseIds ?? [])
      continue
    }
    if (e.kind !== 'message') continue
    const prev = messages[messages.length - 1]
    if (prev?.role === 'user' && e.message.role === 'user') {
      // After a failed or partial turn the runtime merges the next text into the last user message
      // and records it again, whole: that one replaces the earlier (else a tool_result would repeat).
      messages[messages.length - 1] = extendsContent(prev, e.message) ? e.message : { role: 'user', content: [...blocks(prev), ...blocks(e.message)] }
      continue
    }
    messages.push(e.message)
  }
  while (messages.length) {
    const last = messages[messages.length - 1]
    const pendingToolUse = last.role === 'assistant' && Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_use')
    if (pendingToolUse || last.role === 'user') {
      // A turn cut short by the crash; its inbox messages are still unread and come back.
      messages.pop()
      continue
    }
    break
  }
  return messages
}

function blocks(m: MessageParam): Anthropic.ContentBlockParam[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content
}

/** True when `next`'s content starts with all of `prev`'s (the runtime's merge of two user messages). */
function extendsContent(prev: MessageParam, next: MessageParam): boolean {
  const a = blocks(prev)
  const b = blocks(next)
  return a.length <= b.length && a.every((block, i) => JSON.stringify(block) === JSON.stringify(b[i]))
}
