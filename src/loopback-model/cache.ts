import { createHash } from 'node:crypto'
import type { CacheTtl, PromptBlock } from './tokens.js'

/**
 * The loopback model's prompt cache, by Anthropic's rules: an entry is the exact prefix (tools →
 * system → messages) up to a block marked `cache_control`; a request reads the longest live entry
 * found at one of its breakpoints or up to 20 blocks before one; each breakpoint past that writes
 * an entry when its prefix reaches the model's minimum; entries live 5 m (or 1 h) from their last use.
 */

export const MAX_BREAKPOINTS = 4
/** How far before a breakpoint the API looks for an earlier entry. */
export const LOOKBACK_BLOCKS = 20
const TTL_MS: Record<CacheTtl, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 }

/** The shortest cacheable prefix: 2,048 tokens for Haiku, 1,024 for Sonnet and Opus. */
export function minCacheableTokens(model: string): number {
  return /haiku/i.test(model) ? 2048 : 1024
}

/** Usage as the API reports it for the prompt side of a request. */
export interface PromptUsage {
  input_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number }
}

/** A request the API refuses for its breakpoints: the message is the API's. */
export function breakpointProblem(blocks: PromptBlock[]): string | undefined {
  const marked = blocks.filter((b) => b.breakpoint)
  if (marked.length > MAX_BREAKPOINTS) return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`
  const firstShort = marked.findIndex((b) => b.breakpoint === '5m')
  const late = firstShort < 0 ? undefined : marked.slice(firstShort).find((b) => b.breakpoint === '1h')
  if (late) {
    return (
      `${late.path}.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. ` +
      'Note that blocks are processed in the following order: `tools`, `system`, `messages`.'
    )
  }
  return undefined
}

interface Entry {
  expiresAt: number
  ttl: CacheTtl
}

export class PromptCache {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Live entries (expired ones are dropped first). */
  get size(): number {
    this.sweep()
    return this.entries.size
  }

  /** Reads and writes the cache for one request that passed breakpointProblem(); returns its prompt usage. */
  account(model: string, blocks: PromptBlock[]): PromptUsage {
    this.sweep()
    const now = this.now()
    const hashes = prefixHashes(model, blocks)
    const through: number[] = []
    blocks.reduce((sum, b, i) => (through[i] = sum + b.tokens), 0)
    const total = through[through.length - 1] ?? 0
    const marks = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []))

    // The read: the furthest live entry at a breakpoint or within the lookback before one.
    let readEnd = -1
    for (const mark of marks) {
      for (let j = mark; j >= Math.max(0, mark - LOOKBACK_BLOCKS) && j > readEnd; j--) {
        if (this.entries.has(hashes[j]!)) {
          readEnd = j
          break
        }
      }
    }
    // A hit refreshes every entry along the prefix it read.
    for (let j = 0; j <= readEnd; j++) {
      const hit = this.entries.get(hashes[j]!)
      if (hit) hit.expiresAt = now + TTL_MS[hit.ttl]
    }
    // The writes: each breakpoint past the read whose prefix is long enough.
    const written = { '5m': 0, '1h': 0 }
    let writtenEnd = readEnd
    const minimum = minCacheableTokens(model)
    for (const mark of marks) {
      if (mark <= readEnd || through[mark]! < minimum) continue
      const ttl = blocks[mark]!.breakpoint!
      written[ttl] += through[mark]! - (writtenEnd >= 0 ? through[writtenEnd]! : 0)
      writtenEnd = mark
      this.entries.set(hashes[mark]!, { ttl, expiresAt: now + TTL_MS[ttl] })
    }
    const read = readEnd >= 0 ? through[readEnd]! : 0
    const creation = written['5m'] + written['1h']
    return {
      input_tokens: total - read - creation,
      cache_creation_input_tokens: creation,
      cache_read_input_tokens: read,
      cache_creation: { ephemeral_5m_input_tokens: written['5m'], ephemeral_1h_input_tokens: written['1h'] },
    }
  }

  private sweep(): void {
    const now = this.now()
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key)
  }
}

/** hashes[i] names the exact prefix blocks[0..i] on `model` (caches are per model). */
function prefixHashes(model: string, blocks: PromptBlock[]): string[] {
  let previous = createHash('sha256').update(model).digest('hex')
  return blocks.map((b) => (previous = createHash('sha256').update(previous).update('\0').update(b.key).digest('hex')))
}
