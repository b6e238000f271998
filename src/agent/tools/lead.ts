import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import { describeContents } from '../../worktrees/inspect.js'
import { wantsWorktree } from '../definitions/isolation.js'
import { createWorktree, removeWorktree, worktreeCwd } from '../../worktrees/worktree.js'
import { errorMessage } from '../../errors.js'
import { defineTool, type AnyTool, type ToolContext, type ToolResult } from '../tool.js'

/** What the lead's own tools need from the leader process. */
export interface LeadHost {
  /** Starts a named teammate with `prompt` in its inbox (in a worktree of its own with `worktree`); resolves with a one-line report. */
  spawnTeammate(input: { name: string; prompt: string; agentType?: string; model?: string; worktree?: boolean }): Promise<string>
  /** Stops a teammate (graceful, then forced); resolves with a one-line report. */
  stopTeammate(name: string): Promise<string>
  /** Runs a one-off subagent to completion (in `cwd` when given) and resolves with its final report. */
  runSubagent(input: { prompt: string; description: string; agentType?: string; model?: string; cwd?: string }, signal: AbortSignal): Promise<string>
}

const AgentInput = z.object({
  description: z.string().describe('A 3-5 word description of the task'),
  prompt: z.string().describe('The full task: the agent starts with no other context'),
  subagent_type: z.string().optional().describe('Agent type (general-purpose, Explore, Plan, Verification, or a custom one)'),
  name: z.string().optional().describe('Give a name to start a long-lived TEAMMATE in its own pane; omit it for a one-off subagent'),
  model: z.string().optional(),
  run_in_background: z.boolean().optional(),
  isolation: z.enum(['worktree']).optional(),
})

/** The lead's Agent and TaskStop tools. */
export function createLeadTools(host: LeadHost): AnyTool[] {
  const Agent = defineTool({
    name: 'Agent',
    description:
      'Start an agent. With `name`: a teammate that joins the team, gets `prompt` in its inbox, works in its own pane and reports back with SendMessage. ' +
      "Without `name`: a one-off subagent that runs to completion and returns its report as this tool's result.",
    inputSchema: AgentInput,
    kind: 'coordination',
    leadOnly: true,
    summarize: (i) => (i.name ? `teammate ${i.name}: ${i.description}` : `subagent: ${i.description}`),
    async execute(i, ctx) {
      // A teammate's definition is consulted where it is spawned; a subagent's here.
      const worktree =
        i.isolation === 'worktree' ||
        (!i.name && (await wantsWorktree({ agentType: i.subagent_type ?? 'general-purpose', cwd: ctx.cwd, ...(ctx.env ? { env: ctx.env } : {}) })))
      if (i.name) {
        return host.spawnTeammate({
          name: i.name,
          prompt: i.prompt,
          ...(i.subagent_type ? { agentType: i.subagent_type } : {}),
          ...(i.model ? { model: i.model } : {}),
          ...(worktree ? { worktree } : {}),
        })
      }
      const request = {
        prompt: i.prompt,
        description: i.description,
        ...(i.subagent_type ? { agentType: i.subagent_type } : {}),
        ...(i.model ? { model: i.model } : {}),
      }
      if (worktree) return runInWorktree(host, request, ctx)
      return host.runSubagent(request, ctx.signal)
    },
  })
  const TaskStop = defineTool({
    name: 'TaskStop',
    description: 'Stop a running teammate (by name or agent id): it is asked to shut down, then stopped.',
    inputSchema: z.object({ task_id: z.string().describe('The teammate name or <name>@<team>') }),
    kind: 'coordination',
    leadOnly: true,
    async execute(i) {
      return host.stopTeammate(i.task_id.split('@')[0])
    },
  })
  return [Agent, TaskStop]
}

/**
 * A one-off subagent in a worktree of its own: its report is followed by where its changes are.
 * A worktree it left with nothing to lose is removed with its branch; otherwise it is kept.
 */
async function runInWorktree(host: LeadHost, request: Parameters<LeadHost['runSubagent']>[0], ctx: ToolContext): Promise<ToolResult> {
  const env = ctx.env ?? process.env
  const wt = await createWorktree({ repoDir: ctx.cwd, team: ctx.teamName, name: `subagent-${randomBytes(3).toString('hex')}`, env })
  let outcome: ToolResult
  try {
    outcome = { content: await host.runSubagent({ ...request, cwd: await worktreeCwd(wt) }, ctx.signal) }
  } catch (err) {
    outcome = { content: `the subagent failed: ${errorMessage(err)}`, isError: true }
  }
  let where: string
  try {
    const r = await removeWorktree(wt, { env })
    where = r.removed
      ? 'it changed nothing; its worktree was removed'
      : `its work is kept in the worktree ${wt.path} (branch ${wt.branch}): ${describeContents(r.contents)}`
  } catch (err) {
    where = `its worktree ${wt.path} (branch ${wt.branch}) is kept: removing it failed (${errorMessage(err)})`
  }
  return { ...outcome, content: `${outcome.content}\n\n[worktree] ${where}` }
}
