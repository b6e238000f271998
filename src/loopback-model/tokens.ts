/**
 * The loopback model's token estimate, deterministic and the same everywhere: a request is the
 * ordered list of its cacheable blocks (tools, then system, then message content) and each block
 * costs ceil(characters of its canonical JSON / 4) tokens — `cache_control` itself is not counted.
 */

/** Characters per token of the estimate. */
export const CHARS_PER_TOKEN = 4

export type CacheTtl = '5m' | '1h'

/** One block of a request, in the order the API reads prompts: tools → system → messages. */
export interface PromptBlock {
  /** Where it sits, as the API names it in errors: `tools.0`, `system.1`, `messages.3.content.0`. */
  path: string
  /** The block's canonical text (its JSON without `cache_control`, plus the role opening a message). */
  key: string
  tokens: number
  /** Set when the block carries `cache_control: {type: 'ephemeral', ttl?}`. */
  breakpoint?: CacheTtl
}

interface RequestLike {
  tools?: unknown
  system?: unknown
  messages?: unknown
}

/** ceil(length / 4); 0 for the empty string. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN)
}

/** The blocks of a Messages request in prompt order, each with its tokens and breakpoint. */
export function promptBlocks(body: RequestLike): PromptBlock[] {
  const blocks: PromptBlock[] = []
  const add = (path: string, value: unknown, prefix = '') => {
    let key: string
    let breakpoint: CacheTtl | undefined
    if (isRecord(value)) {
      const { cache_control: marker, ...rest } = value
      key = prefix + JSON.stringify(rest)
      breakpoint = cacheTtl(marker)
    } else {
      key = prefix + JSON.stringify(value)
    }
    blocks.push({ path, key, tokens: estimateTextTokens(key), ...(breakpoint ? { breakpoint } : {}) })
  }
  if (Array.isArray(body.tools)) for (const [i, tool] of body.tools.entries()) add(`tools.${i}`, tool)
  if (typeof body.system === 'string') add('system', { type: 'text', text: body.system })
  else if (Array.isArray(body.system)) for (const [i, b] of body.system.entries()) add(`system.${i}`, b)
  if (Array.isArray(body.messages)) {
    body.messages.forEach((m: unknown, i) => {
      const role = isRecord(m) && typeof m.role === 'string' ? m.role : '?'
      const content = isRecord(m) ? m.content : undefined
      const list = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []
      for (const [j, b] of (list as unknown[]).entries()) add(`messages.${i}.content.${j}`, b, j === 0 ? `${role}:` : '')
    })
  }
  return blocks
}

/** Total estimated input tokens of a request. */
export function estimatePromptTokens(body: RequestLike): number {
  return promptBlocks(body).reduce((sum, b) => sum + b.tokens, 0)
}

function cacheTtl(marker: unknown): CacheTtl | undefined {
  if (!isRecord(marker) || marker.type !== 'ephemeral') return undefined
  return marker.ttl === '1h' ? '1h' : '5m'
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
