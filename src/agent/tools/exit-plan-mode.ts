import { z } from 'zod'

/**
 * The input of ExitPlanMode (Claude Code's field). The tool itself needs the mailbox (it sends
 * a `plan_approval_request` to the lead and waits for the answer), so the agent loop declares
 * it with `defineTool({ name: 'ExitPlanMode', inputSchema: exitPlanModeInputSchema, … })`.
 */
export const exitPlanModeInputSchema = z.object({
  plan: z.string().min(1).describe('The plan to run, in Markdown; concise, with the files to change and how to verify it'),
})
export type ExitPlanModeInput = z.output<typeof exitPlanModeInputSchema>

export const EXIT_PLAN_MODE_DESCRIPTION = [
  'Use when you are in plan mode and have finished planning: presents your plan to the team lead for approval.',
  'Until the plan is approved you may only read. Do not use it for research-only tasks.',
].join('\n')
