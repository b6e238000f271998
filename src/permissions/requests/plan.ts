import type { ToolVerdict as ToolDecision } from '../../agent/tool.js'
import type { StructuredMessage } from '../../mailbox/messages.js'
import { PermissionModeName } from '../rules/modes.js'
import { atomicWriteFile } from '../../util/fs.js'
import { bubble, newRequestId, type BubbleContext } from './bubble.js'

export interface PlanContext extends BubbleContext {
  planFile: string
  /** The mode to return to on approval when the lead names none: the one before plan mode. */
  modeBeforePlan(): PermissionModeName
}

/**
 * ExitPlanMode: writes the plan file, sends `plan_approval_request` to team-lead and waits like a
 * permission request. Approval switches the agent to the lead's `permissionMode`, else back to
 * the mode it had before plan mode; rejection keeps plan mode and hands the feedback to the model.
 */
export async function requestPlanApproval(ctx: PlanContext, plan: string, toolUseId: string, signal: AbortSignal): Promise<ToolDecision> {
  const a = ctx.assembly
  await atomicWriteFile(ctx.planFile, plan.endsWith('\n') ? plan : plan + '\n')
  const id = newRequestId('plan')
  const message: StructuredMessage = {
    type: 'plan_approval_request',
    from: a.name,
    timestamp: new Date().toISOString(),
    planFilePath: ctx.planFile,
    planContent: plan,
    requestId: id,
  }
  const firstLine =
    plan
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? ''
  const answer = await bubble(
    ctx,
    {
      id,
      kind: 'plan',
      toolName: 'ExitPlanMode',
      toolUseId,
      input: { plan },
      description: `plan: ${firstLine.slice(0, 100)}`,
      suggestions: [],
      message,
      summary: firstLine.slice(0, 60),
      extra: { planFilePath: ctx.planFile },
    },
    signal,
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
