import { readTeamShared } from '../teams/team-store.js'
import type { BudgetLimit } from './budget.js'
import { emptyUsage, addUsage } from './pricing.js'
import { readMemberState } from '../store/member-state.js'
import type { Spend } from './turn-guards.js'

/**
 * The team's budget as an agent checks it before a request: the limit in the team config and
 * what every member's state.json says it spent. Undefined when the team sets no limit.
 * `ownWritten` (what this member spent, on disk) is waited for only when there is a limit: a
 * turn's request of a team without one waited for the turn's `working` write (issue 25).
 */
export async function readTeamBudget(
  team: string,
  env: NodeJS.ProcessEnv,
  ownWritten?: () => Promise<void>,
): Promise<{ limit: BudgetLimit; spent: Spend } | undefined> {
  const config = await readTeamShared(team, env).catch(() => undefined) // only looked at: every request of every teammate
  const limit = config?.budget
  if (!config || !limit || (limit.maxCostUsd === undefined && limit.maxTokens === undefined)) return undefined
  await ownWritten?.()
  const states = await Promise.all(config.members.map((m) => readMemberState(team, m.name, env).catch(() => undefined)))
  let usage = emptyUsage()
  let costUsd = 0
  for (const s of states) {
    if (s?.usage) usage = addUsage(usage, s.usage)
    costUsd += s?.costUsd ?? 0
  }
  return {
    limit: {
      ...(limit.maxCostUsd !== undefined ? { maxCostUsd: limit.maxCostUsd } : {}),
      ...(limit.maxTokens !== undefined ? { maxTokens: limit.maxTokens } : {}),
    },
    spent: { costUsd, usage },
  }
}
