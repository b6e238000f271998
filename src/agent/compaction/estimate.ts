import type Anthropic from '@anthropic-ai/sdk'

/**
 * The runtime's estimate of a request's prompt tokens: ceil(characters of each block's JSON / 4),
 * the loopback model's rule, close to the real tokenizer's ~4 characters a token for English and code.
 */

export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value ?? '').length / 4)
}

export function estimateRequestTokens(system: unknown, tools: readonly unknown[], messages: readonly Anthropic.MessageParam[]): number {
  let total = estimateTokens(system)
  for (const t of tools) total += estimateTokens(t)
  for (const m of messages) {
    if (typeof m.content === 'string') total += estimateTokens({ type: 'text', text: m.content })
    else for (const b of m.content) total += estimateTokens(b)
  }
  return total
}
