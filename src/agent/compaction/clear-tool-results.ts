import type Anthropic from '@anthropic-ai/sdk'

/**
 * The cheap first stage of compaction: every tool result but the last few is replaced, in place,
 * by a one-line note of what it was. The ids it cleared are recorded so --resume clears the same.
 */

/** Tool results kept whole (the most recent). */
export const KEEP_TOOL_RESULTS = 3
const CLEARED_PREFIX = '[tool result cleared'

type MessageParam = Anthropic.MessageParam

/** Clears old tool results; returns the tool_use ids it cleared (none when there was nothing to clear). */
export function clearOldToolResults(messages: MessageParam[], keep = KEEP_TOOL_RESULTS): string[] {
  const results = toolResultIds(messages).filter((r) => !r.cleared)
  const ids = results.slice(0, Math.max(0, results.length - keep)).map((r) => r.id)
  applyClearing(messages, ids)
  return ids
}

/** Replaces the results of the given tool_use ids by their one-line notes. */
export function applyClearing(messages: MessageParam[], ids: readonly string[]): void {
  if (ids.length === 0) return
  const wanted = new Set(ids)
  const uses = new Map<string, { name: string; input: unknown }>()
  for (const [i, m] of messages.entries()) {
    if (typeof m.content === 'string') continue
    if (m.role === 'assistant') {
      for (const b of m.content) if (b.type === 'tool_use') uses.set(b.id, { name: b.name, input: b.input })
      continue
    }
    if (!m.content.some((b) => b.type === 'tool_result' && wanted.has(b.tool_use_id))) continue
    messages[i] = {
      ...m,
      content: m.content.map((b) =>
        b.type === 'tool_result' && wanted.has(b.tool_use_id) ? { ...b, content: note(uses.get(b.tool_use_id), b.content) } : b,
      ),
    } as MessageParam
  }
}

function note(use: { name: string; input: unknown } | undefined, content: Anthropic.ToolResultBlockParam['content']): string {
  const size = typeof content === 'string' ? content.length : JSON.stringify(content ?? '').length
  const call = use ? `${use.name} ${JSON.stringify(use.input).slice(0, 120)}` : 'a tool call'
  return `${CLEARED_PREFIX} to save context: ${call} returned ${size} characters; run it again if you need it]`
}

function toolResultIds(messages: MessageParam[]): Array<{ id: string; cleared: boolean }> {
  const out: Array<{ id: string; cleared: boolean }> = []
  for (const m of messages) {
    if (m.role !== 'user' || typeof m.content === 'string') continue
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ id: b.tool_use_id, cleared: typeof b.content === 'string' && b.content.startsWith(CLEARED_PREFIX) })
    }
  }
  return out
}
