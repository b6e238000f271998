import type Anthropic from '@anthropic-ai/sdk'

/**
 * A fork's conversation: the parent's messages exactly as they were sent (the last one the
 * assistant turn holding the Agent call), then one user message with a placeholder result for
 * every tool call of that turn — the same text for every fork, so all forks of one turn share the
 * prefix — and last the fork's own directive. Nothing of the parent's is re-rendered, so the
 * request's prefix is the parent's byte for byte and the API serves it from the cache.
 */

type MessageParam = Anthropic.MessageParam

/** The same for every fork: results differ, placeholders do not. */
export const FORK_PLACEHOLDER = 'Fork started — processing in background'

/** Marks a fork's directive; found in a conversation, it means "this is a fork". */
export const FORK_TAG = 'fork-boilerplate'

export function forkDirective(directive: string): string {
  return (
    `<${FORK_TAG}>\n` +
    'You are a fork of the agent whose conversation you see above, not that agent. Do not spawn agents or fork: do the work yourself, directly.\n' +
    'Work only on the directive below. Your last message is your report to the parent: the result first, then what you changed (absolute paths) and anything left open, concisely.\n' +
    `</${FORK_TAG}>\n\n` +
    directive
  )
}

/**
 * The fork's first messages. `parent` is the live conversation at the moment of the Agent call;
 * it is copied, never changed.
 */
export function buildForkMessages(parent: readonly MessageParam[], directive: string): MessageParam[] {
  const last = parent[parent.length - 1]
  if (last?.role !== 'assistant' || typeof last.content === 'string') throw new Error('a fork starts from an assistant turn that called Agent')
  const uses = last.content.filter((b): b is Anthropic.ToolUseBlockParam => b.type === 'tool_use')
  const placeholders: Anthropic.ContentBlockParam[] = uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: FORK_PLACEHOLDER }))
  return [
    ...structuredClone(parent as MessageParam[]),
    { role: 'user', content: [...placeholders, { type: 'text', text: forkDirective(directive) }] },
  ]
}

/** The fallback check of "am I a fork" (the tool context's flag is the first): a fork directive in the conversation. */
export function isInForkChild(messages: readonly MessageParam[]): boolean {
  return messages.some(
    (m) => m.role === 'user' && typeof m.content !== 'string' && m.content.some((b) => b.type === 'text' && b.text.startsWith(`<${FORK_TAG}>`)),
  )
}
