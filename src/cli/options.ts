import { UsageError } from '../errors.js'

/** commander: a repeatable option (`--allow A --allow B`) collected into a list. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value]
}

/** `--max-cost USD` / `--max-tokens N` as member fields; a bad value is a usage error. */
export function budgetFlags(opts: { maxCost?: string; maxTokens?: string }): { maxCostUsd?: number; maxTokens?: number } {
  const cost = opts.maxCost === undefined ? undefined : Number(opts.maxCost)
  const tokens = opts.maxTokens === undefined ? undefined : Number(opts.maxTokens)
  if (cost !== undefined && !(Number.isFinite(cost) && cost > 0))
    throw new UsageError(`--max-cost ${JSON.stringify(opts.maxCost)} is not a positive number of USD`, { hint: 'e.g. --max-cost 2.50' })
  if (tokens !== undefined && !(Number.isInteger(tokens) && tokens > 0))
    throw new UsageError(`--max-tokens ${JSON.stringify(opts.maxTokens)} is not a positive integer`, { hint: 'e.g. --max-tokens 500000' })
  return { ...(cost !== undefined ? { maxCostUsd: cost } : {}), ...(tokens !== undefined ? { maxTokens: tokens } : {}) }
}

/**
 * The help heading of commands only swarm itself runs (a teammate's process, an agent CLI's hooks
 * and MCP server, the relay): listed apart in `swarm --help`, left out of shell completion.
 */
export const PLUMBING = 'Plumbing (run by swarm itself):'
