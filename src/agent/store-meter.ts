import { addMemberSpend, readMemberState } from '../store/member-state.js'
import { budgetShare, describeSpend } from './budget.js'
import { emptyUsage, estimateCost } from './pricing.js'
import { errorMessage } from '../errors.js'
import type { SpendMeter } from './spend-meter.js'
import { readTeamBudget } from './team-budget.js'

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
