import type { Usage } from './pricing.js'

/**
 * The one account of a member's model requests: every request it causes — its own turns, its
 * subagents', forks' and batch workers' — is checked against its budgets before it is sent and
 * recorded in its state.json after. The tool context carries it and the turn loop alone calls it,
 * so no turn runs outside an account.
 */
export interface SpendMeter {
  /** Before a request: why it must not be sent (a budget is spent), or undefined. */
  check(): Promise<string | undefined>
  /** After a request: what it used, priced at the model that served it. */
  record(model: string, usage: Usage): void
}

/** An explicit "nobody's account" (a probe, a test of the loop itself): never stops, records nothing. */
export function unmetered(_why: string): SpendMeter {
  return { check: async () => undefined, record: () => {} }
}
