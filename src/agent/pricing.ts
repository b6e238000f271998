/** Token usage as the Messages API reports it. */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  /** The part of cacheWriteTokens written with the 1 h TTL (priced 2× input instead of 1.25×). */
  cacheWrite1hTokens?: number
}

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 })

export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  return {
    inputTokens: a.inputTokens + (b.inputTokens ?? 0),
    outputTokens: a.outputTokens + (b.outputTokens ?? 0),
    cacheReadTokens: a.cacheReadTokens + (b.cacheReadTokens ?? 0),
    cacheWriteTokens: a.cacheWriteTokens + (b.cacheWriteTokens ?? 0),
    ...(a.cacheWrite1hTokens || b.cacheWrite1hTokens ? { cacheWrite1hTokens: (a.cacheWrite1hTokens ?? 0) + (b.cacheWrite1hTokens ?? 0) } : {}),
  }
}

/** Converts the SDK's usage object (snake_case, nullable cache fields). */
export function usageFromApi(
  u:
    | {
        input_tokens?: number | null
        output_tokens?: number | null
        cache_read_input_tokens?: number | null
        cache_creation_input_tokens?: number | null
        cache_creation?: { ephemeral_1h_input_tokens?: number | null } | null
      }
    | null
    | undefined,
): Usage {
  const longWrites = u?.cache_creation?.ephemeral_1h_input_tokens ?? 0
  return {
    inputTokens: u?.input_tokens ?? 0,
    outputTokens: u?.output_tokens ?? 0,
    cacheReadTokens: u?.cache_read_input_tokens ?? 0,
    cacheWriteTokens: u?.cache_creation_input_tokens ?? 0,
    ...(longWrites ? { cacheWrite1hTokens: longWrites } : {}),
  }
}

/** USD per million tokens: input, output. Cache writes cost 1.25× input (5 m) or 2× (1 h), cache reads 0.1× input. */
const PRICES: Array<[RegExp, number, number]> = [
  [/opus-4-(?:[5-9]|1\d)|opus-[5-9]/, 5, 25],
  [/opus/, 15, 75],
  [/haiku-4|haiku-[5-9]/, 1, 5],
  [/haiku/, 0.8, 4],
  [/sonnet|.*/, 3, 15],
]

/** An estimate, in USD, of what `usage` costs on `model` at list prices. */
export function estimateCost(model: string, usage: Usage): number {
  const [, input, output] = PRICES.find(([re]) => re.test(model)) ?? PRICES[PRICES.length - 1]
  const perToken = (usd: number) => usd / 1_000_000
  const longWrites = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens)
  const cost =
    usage.inputTokens * perToken(input) +
    usage.outputTokens * perToken(output) +
    (usage.cacheWriteTokens - longWrites) * perToken(input * 1.25) +
    longWrites * perToken(input * 2) +
    usage.cacheReadTokens * perToken(input * 0.1)
  return Math.round(cost * 1_000_000) / 1_000_000
}

/** The share of input tokens (plain + cache writes + cache reads) that were read from the cache, 0..1. */
export function cachedShare(usage: Usage): number {
  const total = usage.inputTokens + usage.cacheWriteTokens + usage.cacheReadTokens
  return total === 0 ? 0 : usage.cacheReadTokens / total
}

/** "87%": the cached share for people. */
export function percent(share: number): string {
  return `${Math.round(share * 100)}%`
}
