import { z } from 'zod'
import { defineTool, type AnyTool } from '../tool.js'

/** What the lead's own tools need from the leader process. */
export interface LeadHost {
  /** Starts a named teammate with `prompt` in its inbox; resolves with a one-line report. */
  spawnTeammate(input: { name: string; prompt: string; agentType?: string; model?: string }): Promise<string>
  /** Stops a teammate (graceful, then forced); resolves with a one-line report. */
  stopTeammate(name: string): Promise<string>
  /** Runs a one-off subagent to completion and resolves with its final report. */
  runSubagent(input: { prompt: string; description: string; agentType?: string; model?: string }, signal: AbortSignal): Promise<string>
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
      'Without `name`: a one-off subagent that runs to completion and returns its report as this tool\'s result.',
    inputSchema: AgentInput,
    readOnly: false,
    summarize: (i) => (i.name ? `teammate ${i.name}: ${i.description}` : `subagent: ${i.description}`),
    async execute(i, ctx) {
      if (i.isolation === 'worktree') return { content: 'isolation: worktree is not supported yet; omit it', isError: true }
      if (i.name) {
        return host.spawnTeammate({ name: i.name, prompt: i.prompt, ...(i.subagent_type ? { agentType: i.subagent_type } : {}), ...(i.model ? { model: i.model } : {}) })
      }
      return host.runSubagent({ prompt: i.prompt, description: i.description, ...(i.subagent_type ? { agentType: i.subagent_type } : {}), ...(i.model ? { model: i.model } : {}) }, ctx.signal)
    },
  })
  const TaskStop = defineTool({
    name: 'TaskStop',
    description: 'Stop a running teammate (by name or agent id): it is asked to shut down, then stopped.',
    inputSchema: z.object({ task_id: z.string().describe('The teammate name or <name>@<team>') }),
    readOnly: false,
    async execute(i) {
      return host.stopTeammate(i.task_id.split('@')[0])
    },
  })
  return [Agent, TaskStop]
}
