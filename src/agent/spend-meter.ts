import { addMemberSpend, readMemberState } from '../store/member-state.js'
import { budgetShare, describeSpend } from './budget.js'
import { emptyUsage, estimateCost, type Usage } from './pricing.js'
import { errorMessage } from '../errors.js'
import { readTeamBudget } from './team-budget.js'

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

/**
 * The meter of a process that spends for a member without being its runtime (`swarm batch`): each
 * request is added to the member's state.json (made, `exited`, when it has none), and before each,
 * the member's own recorded budget and the team's are checked against what is on disk.
 */
export function storeMeter(o: { team: string; name: string; env: NodeJS.ProcessEnv }): SpendMeter {
  let writing: Promise<unknown> = Promise.resolve()
  let lost: string | undefined
  return {
    async check() {
      await writing
      // Fails closed: spend that could not be recorded would let the budget be overrun unseen.
      if (lost) return `budget_unknown: ${o.name}'s spend could not be recorded (${lost})`
      const own = await readMemberState(o.team, o.name, o.env).catch(() => undefined)
      const spent = { costUsd: own?.costUsd ?? 0, usage: { ...emptyUsage(), ...own?.usage } }
      if (own?.budget && budgetShare(own.budget, spent) >= 1)
        return `budget_exhausted: ${o.name} spent ${describeSpend(own.budget, spent)} (its budget)`
      const team = await readTeamBudget(o.team, o.env)
      if (team && budgetShare(team.limit, team.spent) >= 1)
        return `budget_exhausted: ${o.name} spent ${describeSpend(team.limit, team.spent)} (the team's budget)`
      return undefined
    },
    record(model, usage) {
      const spend = { usage, costUsd: estimateCost(model, usage) }
      writing = writing
        .then(() => addMemberSpend(o.team, o.name, spend, { env: o.env, create: true }))
        .catch((err: unknown) => {
          lost ??= errorMessage(err)
        })
    },
  }
}
