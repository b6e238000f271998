import { z } from 'zod'
import type { Delegation } from '../subagents/delegation.js'
import { defineTool, type AnyTool } from '../tool.js'

/**
 * TaskStop {task_id}: stops a subagent task of this session (it is notified as stopped), or —
 * given a teammate's name or agent id — that teammate (asked to shut down, then stopped).
 */
export function createTaskStopTool(delegation: Delegation, stopTeammate: (name: string) => Promise<string>): AnyTool {
  return defineTool({
    name: 'TaskStop',
    description: 'Stop a background subagent (by its task id) or a running teammate (by name or agent id).',
    inputSchema: z.object({ task_id: z.string().describe('A task id from Agent, or a teammate name or <name>@<team>') }),
    kind: 'coordination',
    leadOnly: true,
    async execute(i) {
      return delegation.stop(i.task_id) ?? stopTeammate(i.task_id.split('@')[0]!)
    },
  })
}
