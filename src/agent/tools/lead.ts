import { z } from 'zod'
import type { Delegation } from '../subagents/delegation.js'
import { defineTool, type AnyTool } from '../tool.js'
import { createTaskStopTool } from './task-stop.js'

/** What the lead's own tools need from the leader process. */
export interface LeadHost {
  /** Starts a named teammate with `prompt` in its inbox (in a worktree of its own with `worktree`); resolves with a one-line report. */
  spawnTeammate(input: { name: string; prompt: string; agentType?: string; model?: string; worktree?: boolean }): Promise<string>
  /** Stops a teammate (graceful, then forced); resolves with a one-line report. */
  stopTeammate(name: string): Promise<string>
}

const AgentInput = z.object({
  description: z.string().describe('A 3-5 word description of the task'),
  prompt: z.string().describe('The full task: the agent starts with no other context (a fork sees your conversation)'),
  subagent_type: z.string().optional().describe('Agent type (general-purpose, Explore, Plan, Verification, or a custom one)'),
  name: z.string().optional().describe('Give a name to start a long-lived TEAMMATE in its own pane; omit it for a one-off subagent'),
  model: z.string().optional(),
  run_in_background: z.boolean().optional().describe('Return at once with a task id; the result arrives later as a <task-notification>'),
  isolation: z.enum(['worktree']).optional(),
  files: z
    .array(z.string())
    .optional()
    .describe('Implementation workers: every file the worker will change. Workers whose files overlap run one after another'),
})

const FORK_NOTE =
  ' Without `subagent_type` (and without `name`) you FORK yourself: the fork sees this whole conversation and shares its prompt cache, so it is cheap — ' +
  'fork when the intermediate output of a piece of work is not worth keeping in your context (open-ended research, implementation needing more than a couple of edits). ' +
  'Forks always run in the background.'

/**
 * The Agent tool. With `name` (and a host that can): a teammate. Otherwise a subagent run by
 * `delegation` (a fork, a background task, or a foreground run that returns its report).
 */
export function createAgentTool(delegation: Delegation, host?: LeadHost): AnyTool {
  return defineTool({
    name: 'Agent',
    description:
      (host
        ? 'Start an agent. With `name`: a teammate that joins the team, gets `prompt` in its inbox, works in its own pane and reports back with SendMessage. Without `name`: a'
        : 'Start a') +
      " one-off subagent that returns its report as this tool's result — or, with run_in_background, at once with a task id, its report arriving later as a <task-notification>." +
      (delegation.forkEnabled ? FORK_NOTE : ''),
    inputSchema: AgentInput,
    kind: 'coordination',
    leadOnly: true,
    summarize: (i) => (i.name ? `teammate ${i.name}: ${i.description}` : `subagent: ${i.description}`),
    async execute(i, ctx) {
      if (i.name) {
        if (!host || (ctx.depth ?? 0) > 0)
          return { content: 'Not started: only the lead starts teammates; omit `name` for a subagent.', isError: true }
        // A teammate's definition is consulted where it is spawned.
        const spawn = (): Promise<string> =>
          host.spawnTeammate({
            name: i.name!,
            prompt: i.prompt,
            ...(i.subagent_type ? { agentType: i.subagent_type } : {}),
            ...(i.model ? { model: i.model } : {}),
            ...(i.isolation === 'worktree' ? { worktree: true } : {}),
          })
        if (i.run_in_background) return delegation.startTeammate(i.name, i.description, spawn, (name) => host.stopTeammate(name))
        return spawn()
      }
      return delegation.run(i, ctx)
    },
  })
}

/** The lead's Agent and TaskStop tools. */
export function createLeadTools(host: LeadHost, delegation: Delegation, batch?: AnyTool): AnyTool[] {
  return [createAgentTool(delegation, host), createTaskStopTool(delegation, (name) => host.stopTeammate(name)), ...(batch ? [batch] : [])]
}
