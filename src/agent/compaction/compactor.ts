import type Anthropic from '@anthropic-ai/sdk'
import { type CacheSetting, layoutPrompt, type SystemPrompt } from '../cache-layout.js'
import { usageFromApi, type Usage } from '../pricing.js'
import type { NewTranscriptEvent } from '../transcript.js'
import { describeFailure } from '../turn-report.js'
import { clearOldToolResults } from './clear-tool-results.js'
import { estimateRequestTokens } from './estimate.js'
import { type ModelFileReader, recentlyReadFiles, restoreFiles, teamContext } from './restore.js'
import { continuationText, extractSummary, summaryRequest } from './summary-prompt.js'
import { type CompactionPolicy, compactionPolicy } from './thresholds.js'

/**
 * Keeps one agent's conversation inside its context window: before a request above the
 * threshold it clears old tool results, then — still above, or asked to — replaces the history
 * by a summary from one model call plus the recent files and the team context. The conversation
 * array is changed in place; the transcript gets a marker (and the new conversation) so --resume
 * rebuilds the compacted state. Three failures in a row make it `exhausted`, never a loop.
 */

export const MAX_CONSECUTIVE_FAILURES = 3

export type CompactionTrigger = 'auto' | 'manual' | 'prompt_too_long'

type MessageParam = Anthropic.MessageParam

export interface CompactorOptions {
  client: Anthropic
  model: string
  system: SystemPrompt | string
  cache: CacheSetting
  maxTokens: number
  env: NodeJS.ProcessEnv
  cwd: string
  team: string
  name: string
  /** Reads a restored file through the one guard the Read tool uses (readForModel). */
  readFile: ModelFileReader
  record(...events: NewTranscriptEvent[]): Promise<void>
  onUsage(usage: Usage): void
  info(line: string): void
  warn(line: string): void
  signal?: AbortSignal
  /** The window a 400 named for this model in an earlier turn or run (the member's state.json). */
  learnedWindow?: number
  /** A 400 named a window smaller than the one assumed: keep it for the model (the member's state). */
  onWindowLearned?(window: number): void
}

export class Compactor {
  policy: CompactionPolicy
  private failures = 0
  private lastFailure: string | undefined
  private warned = false
  /** Compactions that replaced the history by a summary. */
  summaries = 0

  constructor(private readonly options: CompactorOptions) {
    this.policy = compactionPolicy(options.model, options.maxTokens, options.env, options.learnedWindow)
  }

  /**
   * The API refused a prompt, naming its window (`maximum`): when it is smaller than the one
   * assumed, every later request is measured against it (and the member keeps it for the model),
   * so the next turns compact in time instead of meeting the same 400.
   */
  learnWindow(maximum: number): void {
    if (!Number.isInteger(maximum) || maximum <= 0 || maximum >= this.policy.window) return
    this.policy = compactionPolicy(this.options.model, this.options.maxTokens, this.options.env, maximum)
    this.options.info(`the API's window for ${this.options.model} is ${maximum} tokens: compacting at ${this.policy.compactAt} from now on`)
    this.options.onWindowLearned?.(maximum)
  }

  /** True after MAX_CONSECUTIVE_FAILURES failed compactions in a row; `reason` says why. */
  get exhausted(): boolean {
    return this.failures >= MAX_CONSECUTIVE_FAILURES
  }

  get reason(): string {
    return `compaction failed ${this.failures} times in a row; last: ${this.lastFailure ?? 'unknown'}`
  }

  /** Before each model request: warn near the threshold, compact above it (unless DISABLE_AUTO_COMPACT). */
  async beforeRequest(messages: MessageParam[], tools: readonly Anthropic.Tool[]): Promise<void> {
    if (!this.policy.auto) return
    const tokens = estimateRequestTokens(this.options.system, tools, messages)
    if (tokens >= this.policy.warnAt && !this.warned) {
      this.warned = true
      this.options.info(`context ${tokens} of ${this.policy.window} tokens; compacting at ${this.policy.compactAt}`)
    }
    if (tokens > this.policy.compactAt) await this.compact(messages, tools, 'auto')
  }

  /**
   * Compacts now; false when it failed (the conversation is then as it was, tool results cleared).
   * `maximum`: the window a prompt-too-long answer named, when it is smaller than ours.
   */
  async compact(
    messages: MessageParam[],
    tools: readonly Anthropic.Tool[],
    trigger: CompactionTrigger,
    focus?: string,
    maximum?: number,
  ): Promise<boolean> {
    const target = maximum ? Math.min(this.policy.compactAt, Math.floor(maximum * 0.8)) : this.policy.compactAt
    const window = maximum ? Math.min(this.policy.effectiveWindow, maximum) : this.policy.effectiveWindow
    const tokensBefore = estimateRequestTokens(this.options.system, tools, messages)
    const cleared = clearOldToolResults(messages)
    const afterClearing = estimateRequestTokens(this.options.system, tools, messages)
    if (cleared.length) {
      await this.options.record({
        kind: 'compaction',
        stage: 'tool_results_cleared',
        trigger,
        toolUseIds: cleared,
        tokensBefore,
        tokensAfter: afterClearing,
      })
      if (trigger !== 'manual' && afterClearing <= target) {
        this.options.info(`cleared ${cleared.length} old tool results: ${tokensBefore} → ${afterClearing} tokens`)
        this.succeeded()
        return true
      }
    }
    try {
      const summary = await this.summarise(messages, tools, window, focus)
      const original = [...messages]
      const restored = [
        ...(await restoreFiles(recentlyReadFiles(original), this.options.readFile)),
        await teamContext(this.options.team, this.options.name, this.options.env),
      ]
      const next = compactedConversation(original, continuationText(summary, restored))
      messages.splice(0, messages.length, ...next)
      const tokensAfter = estimateRequestTokens(this.options.system, tools, messages)
      if (tokensAfter > target) throw new Error(`the compacted conversation is still ${tokensAfter} tokens (threshold ${target})`)
      await this.options.record(
        { kind: 'compaction', stage: 'summarized', trigger, tokensBefore, tokensAfter, ...(focus ? { focus } : {}) },
        ...next.map((message): NewTranscriptEvent => ({ kind: 'message', message })),
      )
      this.summaries++
      this.succeeded()
      this.options.info(`compacted the conversation (${trigger}): ${tokensBefore} → ${tokensAfter} tokens`)
      return true
    } catch (err) {
      this.failures++
      this.lastFailure = describeFailure(err)
      await this.options.record({ kind: 'compaction', stage: 'failed', trigger, tokensBefore, reason: this.lastFailure })
      this.options.warn(`compaction failed (${this.failures}/${MAX_CONSECUTIVE_FAILURES}): ${this.lastFailure}`)
      return false
    }
  }

  private succeeded(): void {
    this.failures = 0
    this.lastFailure = undefined
    this.warned = false
  }

  /** One model call over the conversation (its prefix is the cached one) with the summary prompt last. */
  private async summarise(messages: MessageParam[], tools: readonly Anthropic.Tool[], window: number, focus?: string): Promise<string> {
    const request = withLastUserText(fitWindow(messages, this.options.system, tools, window - this.options.maxTokens), summaryRequest(focus))
    const prompt = layoutPrompt(this.options.system, request, this.options.cache)
    const reply = await this.options.client.messages.create(
      {
        model: this.options.model,
        max_tokens: this.options.maxTokens,
        system: prompt.system,
        messages: prompt.messages,
        ...(tools.length ? { tools: [...tools] } : {}),
      },
      { headers: { 'x-swarm-agent': this.options.name }, ...(this.options.signal ? { signal: this.options.signal } : {}) },
    )
    this.options.onUsage(usageFromApi(reply.usage))
    const summary = extractSummary(reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''))
    if (!summary) throw new Error('the summarising call returned no text')
    return summary
  }
}

/** The conversation without its oldest messages until it fits the window (a summary of the rest beats none). */
function fitWindow(messages: MessageParam[], system: SystemPrompt | string, tools: readonly Anthropic.Tool[], window: number): MessageParam[] {
  let start = 0
  const budget = window - 2_000 // room for the summary prompt
  while (start < messages.length - 1 && estimateRequestTokens(system, tools, messages.slice(start)) > budget) {
    start++
    // Begin at a user message that does not answer a dropped tool call.
    while (start < messages.length - 1 && !(messages[start]!.role === 'user' && !hasToolResult(messages[start]!))) start++
  }
  return messages.slice(start)
}

/** `messages` with `text` as the last user message (added to it, or as a new one after an assistant message). */
function withLastUserText(messages: MessageParam[], text: string): MessageParam[] {
  const last = messages[messages.length - 1]
  if (last?.role !== 'user') return [...messages, { role: 'user', content: text }]
  return [...messages.slice(0, -1), { role: 'user', content: [...blocks(last), { type: 'text', text }] }]
}

/**
 * The compacted conversation: the continuation message, then what the next request needs —
 * the pending tool call and its results, or the unanswered user message merged into the first.
 */
function compactedConversation(original: MessageParam[], head: string): MessageParam[] {
  const last = original[original.length - 1]
  const prev = original[original.length - 2]
  if (last?.role === 'user' && hasToolResult(last) && prev?.role === 'assistant') return [{ role: 'user', content: head }, prev, last]
  if (last?.role === 'user')
    return [{ role: 'user', content: [{ type: 'text', text: head }, ...blocks(last).filter((b) => b.type !== 'tool_result')] }]
  return [{ role: 'user', content: head }]
}

function hasToolResult(m: MessageParam): boolean {
  return typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result')
}

function blocks(m: MessageParam): Anthropic.ContentBlockParam[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content
}
