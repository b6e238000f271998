import { addMemberSpend, readMemberState } from '../store/member-state.js'
import { type BudgetLimit, budgetShare, describeSpend } from './budget.js'
import { emptyUsage, estimateCost } from './pricing.js'
import { errorMessage } from '../errors.js'
import type { SpendMeter } from './spend-meter.js'
import { readTeamBudget } from './team-budget.js'

/**
 * The meter of a process that spends for a member without being its runtime (`swarm batch`, an
 * agent CLI's metering proxy): each request is added to the member's state.json (made, `exited`
 * unless `status` says otherwise, when it has none), and before each, the member's own budget
 * (its record's, or what `budget` reads) and the team's are checked against what is on disk.
 */
export function storeMeter(o: {
  team: string
  name: string
  env: NodeJS.ProcessEnv
  /** Where the member's limit is read before each request (an agent CLI's: its team entry, which `swarm budget` raises). */
  budget?: () => Promise<BudgetLimit | undefined>
  status?: 'starting' | 'working' | 'exited'
}): SpendMeter {
  let writing: Promise<unknown> = Promise.resolve()
  let lost: string | undefined
  return {
    async check() {
      await writing
      // Fails closed: spend that could not be recorded would let the budget be overrun unseen.
      if (lost) return `budget_unknown: ${o.name}'s spend could not be recorded (${lost})`
      const own = await readMemberState(o.team, o.name, o.env).catch(() => undefined)
      const spent = { costUsd: own?.costUsd ?? 0, usage: { ...emptyUsage(), ...own?.usage } }
      const limit = o.budget ? await o.budget() : own?.budget
      if (limit && budgetShare(limit, spent) >= 1) return `budget_exhausted: ${o.name} spent ${describeSpend(limit, spent)} (its budget)`
      const team = await readTeamBudget(o.team, o.env)
      if (team && budgetShare(team.limit, team.spent) >= 1)
        return `budget_exhausted: ${o.name} spent ${describeSpend(team.limit, team.spent)} (the team's budget)`
      return undefined
    },
    record(model, usage) {
      const spend = { usage, costUsd: estimateCost(model, usage) }
      writing = writing
        .then(() => addMemberSpend(o.team, o.name, spend, { env: o.env, create: true, ...(o.status && { status: o.status }) }))
        .catch((err: unknown) => {
          lost ??= errorMessage(err)
        })
    },
  }
}
