import type Anthropic from '@anthropic-ai/sdk'
import { breakpointsOf } from '../cache-layout.js'
import type { AgentOutput } from '../render.js'
import type { PermissionCheck, TurnRequest } from '../tool.js'
import { runTurn } from '../turn.js'
import { changedFiles, reportOf, type SubagentRun, subagentContext } from './fresh.js'
import type { RunTracker } from './task-registry.js'
import type { BashSandbox } from '../../sandbox/types.js'
import type { SpendMeter } from '../spend-meter.js'

/** A fork runs long (Claude Code's fork agent: 200 model calls). */
export const FORK_MAX_TURNS = 200

export interface ForkRunRequest {
  team: string
  parent: string
  cwd: string
  env: NodeJS.ProcessEnv
  client: Anthropic
  /** The parent's request: model, max_tokens, system and tools are reused as they are. */
  request: TurnRequest
  /** From buildForkMessages, taken at the moment of the Agent call. */
  messages: Anthropic.MessageParam[]
  checkPermission: PermissionCheck
  /** The parent's sandbox: a fork's Bash runs where its parent's does. */
  sandbox: BashSandbox
  /** The parent's account. */
  meter: SpendMeter
  signal: AbortSignal
  depth: number
  label: string
  tracker: RunTracker
  output?: AgentOutput
}

/**
 * Runs a fork: the parent's model, max_tokens, system prompt and tool objects — so the same
 * bytes — over the forked messages. Its tool context marks it a fork child: its Agent calls are
 * refused, although the Agent tool stays in its tool list (removing it would change the prefix).
 */
export async function runForkSubagent(req: ForkRunRequest): Promise<SubagentRun> {
  const result = await runTurn({
    client: req.client,
    model: req.request.model,
    maxTokens: req.request.maxTokens,
    system: req.request.system,
    ...(req.request.cache ? { cache: req.request.cache } : {}),
    // The parent's last request marked these; marking them again keeps its bytes.
    keepBreakpoints: breakpointsOf(req.request.messages.length - 1, req.request.messages),
    tools: [...req.request.tools],
    messages: req.messages,
    maxIterations: FORK_MAX_TURNS,
    signal: req.signal,
    agentHeader: req.label,
    toolContext: { ...subagentContext(req, req.depth), forkChild: true },
    onToolEnd: (name, input, r, ms) => {
      req.tracker.toolUses++
      req.output?.tool(name, input, r, ms)
    },
    onUsage: (u) => req.tracker.addUsage(u),
  })
  return { status: result.status, report: reportOf(result, '(the fork ended without a report)'), changedFiles: changedFiles(result, req.cwd) }
}
