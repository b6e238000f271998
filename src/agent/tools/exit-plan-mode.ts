import { z } from 'zod'
import { planFilePath } from '../../home/paths.js'
import { readMemberState } from '../../store/member-state.js'
import { defineTool, truncateLine } from '../tool.js'

/**
 * The input of ExitPlanMode (Claude Code's field). The tool itself needs the mailbox (it sends
 * a `plan_approval_request` to the lead and waits for the answer); that part lives in the
 * permission layer (src/permissions/requests/plan.ts), see exitPlanModeTool below.
 */
export const exitPlanModeInputSchema = z.object({
  plan: z.string().min(1).describe('The plan to run, in Markdown; concise, with the files to change and how to verify it'),
})

export const EXIT_PLAN_MODE_DESCRIPTION = [
  'Use when you are in plan mode and have finished planning: presents your plan to the team lead for approval.',
  'Until the plan is approved you may only read. Do not use it for research-only tasks.',
].join('\n')

/**
 * ExitPlanMode. The asking happens in the permission check, as in Claude Code: the permission
 * layer sends the plan to team-lead as a `plan_approval_request` and lets the call through only
 * once team-lead approved it and switched the agent out of plan mode. The tool then reports the
 * new mode; if the agent is still in plan mode, nobody approved anything (no permission layer).
 */
export const exitPlanModeTool = defineTool({
  name: 'ExitPlanMode',
  description: EXIT_PLAN_MODE_DESCRIPTION,
  inputSchema: exitPlanModeInputSchema,
  kind: 'coordination',
  summarize: (input) => truncateLine(input.plan.split('\n').find((l) => l.trim()) ?? input.plan, 60),
  async execute(_input, ctx) {
    const state = await readMemberState(ctx.teamName, ctx.agentName, ctx.env).catch(() => undefined)
    const mode = state?.mode
    if (mode === undefined || mode === 'plan') {
      return { content: 'The plan was not approved: you are still in plan mode. Nobody answered the plan approval request.', isError: true }
    }
    return `team-lead approved your plan (saved at ${planFilePath(ctx.teamName, ctx.agentName, ctx.env)}). Your permission mode is now ${mode}. Start implementing the plan now.`
  },
})
