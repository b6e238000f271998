import type Anthropic from '@anthropic-ai/sdk'

/**
 * How a request is laid out for prompt caching: tools in their fixed order, the system prompt's
 * static part (byte-stable: no timestamps, counters or member lists) ending in a breakpoint, its
 * dynamic part after it, and breakpoints on the last message and the user message before it — at
 * most 3 of the API's 4. The conversation itself is never modified; marked copies are sent.
 */

export type PromptCacheTtl = '5m' | '1h'

/** The system prompt in two parts: `static` is cached, `dynamic` (who is on the team, …) follows it. */
export interface SystemPrompt {
  static: string
  dynamic?: string
}

/** Caching for one agent's requests: off, or on with a TTL (settings `promptCacheTtl`). */
export type CacheSetting = { enabled: false } | { enabled: true; ttl: PromptCacheTtl }

/** The API allows 4 breakpoints; the system prompt's static part takes one. */
const MAX_MESSAGE_BREAKPOINTS = 3

export const DEFAULT_CACHE: CacheSetting = { enabled: true, ttl: '5m' }

type MessageParam = Anthropic.MessageParam
type TextBlockParam = Anthropic.TextBlockParam
type ContentBlockParam = Anthropic.ContentBlockParam

export interface LaidOutPrompt {
  system: TextBlockParam[]
  messages: MessageParam[]
}

/** The whole system prompt as one text (logs, subagents that only need the words). */
export function systemText(system: SystemPrompt | string): string {
  if (typeof system === 'string') return system
  return system.dynamic ? `${system.static}\n\n${system.dynamic}` : system.static
}

/** The request's system blocks and messages with their breakpoints (none when caching is off). */
export function layoutPrompt(
  system: SystemPrompt | string,
  messages: MessageParam[],
  cache: CacheSetting,
  keep: readonly number[] = [],
): LaidOutPrompt {
  const parts = typeof system === 'string' ? { static: system } : system
  const marker = cache.enabled ? { cache_control: { type: 'ephemeral' as const, ...(cache.ttl === '1h' ? { ttl: '1h' as const } : {}) } } : {}
  const blocks: TextBlockParam[] = [{ type: 'text', text: parts.static, ...marker }]
  if (parts.dynamic) blocks.push({ type: 'text', text: parts.dynamic })
  if (!cache.enabled || messages.length === 0) return { system: blocks, messages }
  const marked = new Set<number>(breakpointsOf(messages.length, messages))
  // Kept ones (latest first) only while the request stays within the API's 4 (one is the system's).
  for (const i of [...keep].sort((a, b) => b - a)) if (i < messages.length && (marked.has(i) || marked.size < MAX_MESSAGE_BREAKPOINTS)) marked.add(i)
  return { system: blocks, messages: messages.map((m, i) => (marked.has(i) ? markLastBlock(m, marker) : m)) }
}

/**
 * The messages a request of `length` messages marks: the last, and the user message before it —
 * the previous user message holds the entry the last request wrote, so it is read even when the
 * newest turn added more than the API's 20-block lookback (many parallel tool results).
 */
export function breakpointsOf(length: number, messages: readonly MessageParam[]): number[] {
  if (length === 0) return []
  const marks = [length - 1]
  for (let i = length - 2; i >= 0; i--) {
    if (messages[i]!.role === 'user') {
      marks.push(i)
      break
    }
  }
  return marks
}

function markLastBlock(message: MessageParam, marker: object): MessageParam {
  const content: ContentBlockParam[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content]
  // Empty text and thinking blocks cannot carry cache_control; mark the last block that can.
  for (let i = content.length - 1; i >= 0; i--) {
    const block = content[i]!
    if ((block.type === 'text' && block.text === '') || block.type === 'thinking' || block.type === 'redacted_thinking') continue
    content[i] = { ...block, ...marker } as ContentBlockParam
    return { ...message, content } as MessageParam
  }
  return message
}
