import type { Usage } from './pricing.js'

/**
 * A teammate's spending limit: USD (at list prices, cache prices included) and/or tokens (every
 * token a request processed: input, cache writes, cache reads and output). Reaching either ends
 * the turn; 80 % is worth a word to the lead, once per limit.
 */

export interface BudgetLimit {
  maxCostUsd?: number
  maxTokens?: number
}

export const WARN_SHARE = 0.8

export function totalTokens(u: Usage): number {
  return u.inputTokens + u.cacheWriteTokens + u.cacheReadTokens + u.outputTokens
}

/** The largest used share of either limit (0 without limits). */
export function budgetShare(limit: BudgetLimit, spent: { costUsd: number; usage: Usage }): number {
  const shares = [
    limit.maxCostUsd !== undefined ? spent.costUsd / Math.max(limit.maxCostUsd, Number.EPSILON) : 0,
    limit.maxTokens !== undefined ? totalTokens(spent.usage) / Math.max(limit.maxTokens, 1) : 0,
  ]
  return Math.max(...shares)
}

/** "$0.4123 of $0.5000" / "91234 of 100000 tokens": what is spent against what is allowed. */
export function describeSpend(limit: BudgetLimit, spent: { costUsd: number; usage: Usage }): string {
  const parts: string[] = []
  if (limit.maxCostUsd !== undefined) parts.push(`$${spent.costUsd.toFixed(4)} of $${limit.maxCostUsd.toFixed(4)}`)
  if (limit.maxTokens !== undefined) parts.push(`${totalTokens(spent.usage)} of ${limit.maxTokens} tokens`)
  return parts.join(', ') || 'no budget'
}

/** The limit raised by `add` (`swarm budget --add`); an unlimited side stays unlimited. */
export function raiseBudget(limit: BudgetLimit, add: { usd?: number; tokens?: number }): BudgetLimit {
  return {
    ...(limit.maxCostUsd !== undefined ? { maxCostUsd: limit.maxCostUsd + (add.usd ?? 0) } : {}),
    ...(limit.maxTokens !== undefined ? { maxTokens: limit.maxTokens + (add.tokens ?? 0) } : {}),
  }
}

/** Merges limits, the first one that sets a field wins (spawn flag > member > definition > team default). */
export function firstLimit(...limits: Array<BudgetLimit | undefined>): BudgetLimit {
  const out: BudgetLimit = {}
  for (const l of limits) {
    if (out.maxCostUsd === undefined && l?.maxCostUsd !== undefined) out.maxCostUsd = l.maxCostUsd
    if (out.maxTokens === undefined && l?.maxTokens !== undefined) out.maxTokens = l.maxTokens
  }
  return out
}
