import type { AgentAssembly } from '../../agent/start.js'
import { ask, type AskContext } from '../../asks/ask.js'
import type { Verdict } from '../../asks/types.js'
import { PermissionModeName } from '../rules/modes.js'
import { atomicWriteFile } from '../../util/fs.js'

export interface PlanContext extends AskContext {
  assembly: AgentAssembly
  planFile: string
  /** The mode to return to on approval when the lead names none: the one before plan mode. */
  modeBeforePlan(): PermissionModeName
}

/**
 * ExitPlanMode: writes the plan file, asks team-lead through the one ask flow (a
 * `plan_approval_request`) and waits like a permission request. Approval switches the agent to
 * the lead's `permissionMode`, else back to the mode it had before plan mode; rejection keeps plan
 * mode and hands the feedback to the model.
 */
export async function requestPlanApproval(ctx: PlanContext, plan: string, toolUseId: string, signal: AbortSignal): Promise<Verdict> {
  const a = ctx.assembly
  await atomicWriteFile(ctx.planFile, plan.endsWith('\n') ? plan : plan + '\n')
  const firstLine =
    plan
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? ''
  const answer = await ask(
    ctx,
    {
      kind: 'plan',
      toolName: 'ExitPlanMode',
      toolUseId,
      input: { plan },
      description: `plan: ${firstLine.slice(0, 100)}`,
      suggestions: [],
      summary: firstLine.slice(0, 60),
      planFilePath: ctx.planFile,
    },
    { signal },
  )
  if (answer.kind === 'cancelled') return { behavior: 'deny', message: `the plan was not approved: ${answer.reason}` }
  if (answer.kind === 'deny') {
    return {
      behavior: 'deny',
      message:
        `${answer.by} rejected the plan${answer.feedback ? `: ${answer.feedback}` : ''}. ` +
        `You are still in plan mode: revise the plan (${ctx.planFile}) and call ExitPlanMode again.`,
    }
  }
  const edited = typeof answer.updatedInput?.plan === 'string' ? answer.updatedInput.plan : undefined
  if (edited !== undefined) await atomicWriteFile(ctx.planFile, edited.endsWith('\n') ? edited : edited + '\n')
  const asked = answer.permissionMode === undefined ? undefined : PermissionModeName.safeParse(answer.permissionMode)
  if (asked && !asked.success) a.output.warn(`ignored unknown permissionMode ${JSON.stringify(answer.permissionMode)} in the plan approval`)
  const mode = asked?.success ? asked.data : ctx.modeBeforePlan()
  await a.state.update({ mode })
  await a.transcript.append({ kind: 'state', state: 'working', detail: `plan approved by ${answer.by}; mode ${mode}` })
  a.output.info(`plan approved by ${answer.by}; permission mode is now ${mode}`)
  return { behavior: 'allow', ...(edited !== undefined ? { updatedInput: { plan: edited } } : {}) }
}
