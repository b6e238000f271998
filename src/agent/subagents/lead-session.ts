import type { AgentOutput } from '../render.js'
import type { AnyTool, PermissionCheck } from '../tool.js'
import { createAgentTool, createLeadTools, type LeadHost } from '../tools/lead.js'
import { Delegation, type DelegationOptions } from './delegation.js'
import { delegationLimits, forkSetting } from './limits.js'

/**
 * The lead's delegation for one leader session: the limits from the environment and settings,
 * the task registry, and the lead's Agent and TaskStop tools. Notifications go to `deliver`,
 * which hands them to the lead's next turn.
 */
export interface LeadDelegationOptions extends Pick<DelegationOptions, 'team' | 'parent' | 'cwd' | 'env' | 'client' | 'leaderModel' | 'coordinator'> {
  /** Resolved when called: the lead's permission layer exists only once the lead is assembled. */
  checkPermission: PermissionCheck
  workerNote?: string
  output?: AgentOutput
  deliver(text: string): void
  /** The Batch tool (it lives above the agent layer, with swarm batch). */
  batchTool?: AnyTool
}

export async function createLeadDelegation(o: LeadDelegationOptions, host: LeadHost): Promise<{ delegation: Delegation; tools: AnyTool[] }> {
  const fork = await forkSetting(o.cwd, o.env)
  const limits = delegationLimits(o.env, fork === undefined ? {} : { forkSubagent: fork })
  let nested: AnyTool | undefined
  const delegation: Delegation = new Delegation({
    team: o.team,
    parent: o.parent,
    cwd: o.cwd,
    env: o.env,
    client: o.client,
    ...(o.leaderModel ? { leaderModel: o.leaderModel } : {}),
    checkPermission: o.checkPermission,
    limits,
    ...(o.coordinator ? { coordinator: true } : {}),
    ...(o.workerNote ? { workerNote: o.workerNote } : {}),
    ...(o.output ? { output: o.output } : {}),
    notify: (text, entry) => {
      o.output?.info(`task ${entry.id} (${entry.description}) ${entry.state}`)
      o.deliver(text)
    },
    nestedAgentTool: () => (nested ??= createAgentTool(delegation)),
  })
  return { delegation, tools: createLeadTools(host, delegation, o.batchTool) }
}
