import type Anthropic from '@anthropic-ai/sdk'

/** The conversation array the runtime keeps: appended to in place, roles always alternating. */

/** Appends user text; after a partial or failed turn the last message is a user one, so it is merged into it. */
export function appendUserText(messages: Anthropic.MessageParam[], text: string): void {
  const last = messages[messages.length - 1]
  if (last?.role === 'user') {
    const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content
    last.content = [...content, { type: 'text', text }]
  } else {
    messages.push({ role: 'user', content: text })
  }
}
