import type Anthropic from '@anthropic-ai/sdk'
import { z } from 'zod'
import { formatBatchReport } from './report.js'
import { DEFAULT_PARALLEL, runBatch } from './run.js'
import { checkSubtasks, MAX_SUBTASKS, MIN_SUBTASKS, Subtask } from './batch-file.js'
import { errorMessage } from '../errors.js'
import type { AgentOutput } from '../agent/render.js'
import { defineTool, type AnyTool } from '../agent/tool.js'
import { loadPermissionSettings } from '../permissions/rules/settings.js'

/**
 * The lead's Batch tool: `swarm batch` from a turn — 5–30 independent subtasks, each in its own
 * worktree and branch, ending with a commit; the aggregate report is the tool's result. The
 * subtasks' tool calls pass the lead's own permission check.
 */
export function createBatchTool(o: {
  client: Anthropic
  env: NodeJS.ProcessEnv
  parent: string
  leaderModel?: string
  output?: AgentOutput
}): AnyTool {
  return defineTool({
    name: 'Batch',
    description:
      `Run ${MIN_SUBTASKS}–${MAX_SUBTASKS} INDEPENDENT subtasks in parallel, each in a git worktree and branch of its own (swarm/<team>/batch-<name>), each ending with a commit. ` +
      'Use it for large mechanical changes that split into parts touching different files (a rename across modules, a migration, tests for many files). Every prompt must be self-contained. ' +
      'The result is the aggregate report: succeeded / failed, branch, files, tokens; failed subtasks keep their worktrees.',
    inputSchema: z.object({
      tasks: z.array(Subtask).describe('Each: name (names its branch), prompt (self-contained), agentType?, model?'),
      parallel: z.number().int().min(1).max(MAX_SUBTASKS).optional().describe(`Subtasks at a time (default ${DEFAULT_PARALLEL})`),
    }),
    kind: 'coordination',
    leadOnly: true,
    summarize: (i) => `batch of ${i.tasks.length}`,
    async execute(i, ctx) {
      try {
        checkSubtasks(i.tasks, 'the batch')
      } catch (err) {
        return { content: errorMessage(err), isError: true }
      }
      const report = await runBatch({
        team: ctx.teamName,
        repoDir: ctx.cwd,
        env: o.env,
        client: o.client,
        tasks: i.tasks,
        ...(i.parallel ? { parallel: i.parallel } : {}),
        checkPermission: ctx.checkPermission,
        sandboxConfig: (await loadPermissionSettings({ cwd: ctx.cwd, env: o.env })).sandbox,
        parent: o.parent,
        meter: ctx.meter,
        ...(o.leaderModel ? { leaderModel: o.leaderModel } : {}),
        signal: ctx.signal,
        ...(o.output ? { output: o.output } : {}),
      })
      return { content: formatBatchReport(report), ...(report.succeeded === 0 ? { isError: true } : {}) }
    },
  })
}
