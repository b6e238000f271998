import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type Anthropic from '@anthropic-ai/sdk'
import { NotFoundError } from '../../errors.js'
import { findWorktreeRecord, worktreeNotice } from '../../worktrees/notice.js'
import { scratchDirNote } from '../definitions/built-in.js'
import { loadAgentDefinitions } from '../definitions/load.js'
import { resolveToolsForAgent } from '../definitions/tool-filter.js'
import { resolveModel } from '../model.js'
import type { AgentOutput } from '../render.js'
import { allTools } from '../tool-registry.js'
import type { AnyTool, PermissionCheck, ToolContext } from '../tool.js'
import { runTurn, type TurnResult } from '../turn.js'
import type { RunTracker } from './task-registry.js'
import type { BashSandbox } from '../../sandbox/types.js'
import type { SpendMeter } from '../spend-meter.js'

export interface SubagentRequest {
  team: string
  /** Who runs it (its permission requests are asked as this agent). */
  parent: string
  cwd: string
  env: NodeJS.ProcessEnv
  client: Anthropic
  prompt: string
  agentType?: string
  model?: string
  leaderModel?: string
  checkPermission: PermissionCheck
  /** Where its Bash runs: its parent's sandbox (a batch worker: its own, on its worktree). */
  sandbox: BashSandbox
  /** Whose account its requests are checked against and recorded in: its parent's. */
  meter: SpendMeter
  signal: AbortSignal
  output?: AgentOutput
  /** Its depth in delegation (the lead's subagents: 1). */
  depth?: number
  /** The `x-swarm-agent` header of its requests; default the parent's name. */
  label?: string
  /** Receives its usage and tool calls as it goes. */
  tracker?: RunTracker
  /** The Agent tool it may use to nest (given only when its type allows Agent). */
  agentTool?: AnyTool
  /** A paragraph added to its system prompt (the coordinator's scratchpad). */
  promptNote?: string
}

export interface SubagentRun {
  status: TurnResult['status']
  /** The final report as the parent sees it (partial and aborted runs are marked). */
  report: string
  /** Files it wrote with Write or Edit (absolute). */
  changedFiles: string[]
}

/**
 * A one-off subagent: a fresh conversation with the type's own prompt and tools — no team
 * tools, it only reports back — run to completion. A run cut short by maxTurns is marked partial.
 */
export async function runFreshSubagent(req: SubagentRequest): Promise<SubagentRun> {
  const { definitions } = await loadAgentDefinitions({ cwd: req.cwd, env: req.env })
  const typeName = req.agentType ?? 'general-purpose'
  const def = definitions.get(typeName)
  if (!def) throw new NotFoundError(`unknown agent type "${typeName}"`, { hint: `known types: ${[...definitions.keys()].join(', ')}` })
  const { model } = resolveModel({ spawnModel: req.model, definitionModel: def.model, leaderModel: req.leaderModel, env: req.env })
  // A one-off subagent has no mailbox or task list: no coordination tools (but Agent, to nest, when given).
  const available = [...allTools().filter((t) => t.kind !== 'coordination'), ...(req.agentTool ? [req.agentTool] : [])]
  const { tools: names } = resolveToolsForAgent(def, available, { isTeammate: !req.agentTool })
  // The type's prompt is the cached prefix every run of this type shares; what names this run follows it.
  let dynamic = `Working directory: ${req.cwd}\nYou are a one-off subagent of ${req.parent}: your final message is your report.`
  let writableRoots: string[] | undefined
  if (def.writableTempDir) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-subagent-'))
    writableRoots = [dir]
    dynamic += scratchDirNote(dir)
  }
  const worktree = await findWorktreeRecord(req.team, req.cwd, req.env).catch(() => undefined)
  if (worktree) dynamic += `\n\n${worktreeNotice(worktree)}`
  if (req.promptNote) dynamic += `\n\n${req.promptNote}`
  const system = { static: def.systemPrompt, dynamic }
  try {
    const result = await runTurn({
      client: req.client,
      model,
      system,
      tools: available.filter((t) => names.includes(t.name)),
      messages: [{ role: 'user', content: req.prompt }],
      maxIterations: def.maxTurns ?? 50,
      signal: req.signal,
      agentHeader: req.label ?? req.parent,
      toolContext: { ...subagentContext(req, req.depth ?? 1), ...(writableRoots ? { writableRoots } : {}) },
      onToolEnd: (name, input, r, ms) => {
        if (req.tracker) req.tracker.toolUses++
        req.output?.tool(name, input, r, ms)
      },
      onUsage: (u) => req.tracker?.addUsage(u),
    })
    return { status: result.status, report: reportOf(result, '(the subagent ended without a report)'), changedFiles: changedFiles(result, req.cwd) }
  } finally {
    if (writableRoots) await fs.rm(writableRoots[0]!, { recursive: true, force: true })
  }
}

/** The subagent's report as one string (what the lead's Agent tool returns in the foreground). */
export async function runSubagent(req: SubagentRequest): Promise<string> {
  return (await runFreshSubagent(req)).report
}

/** The tool context of a subagent's calls: asked as its parent, its Bash in its parent's sandbox, its requests on its parent's account. */
export function subagentContext(
  req: Pick<SubagentRequest, 'cwd' | 'signal' | 'parent' | 'team' | 'env' | 'checkPermission' | 'sandbox' | 'meter'>,
  depth: number,
): ToolContext {
  return {
    cwd: req.cwd,
    signal: req.signal,
    agentName: req.parent,
    teamName: req.team,
    env: req.env,
    checkPermission: req.checkPermission,
    sandbox: req.sandbox,
    meter: req.meter,
    depth,
  }
}

/** The final text, marked when the run was cut short. */
export function reportOf(result: TurnResult, empty: string): string {
  if (result.status === 'partial') return `(partial: stopped after ${result.iterations} model calls)\n${result.text}`
  if (result.status === 'aborted') return `(aborted)\n${result.text}`
  if (result.status === 'stopped') return `(stopped: ${result.stopReason ?? 'a guard ended it'})\n${result.text}`
  return result.text || empty
}

/** Absolute paths of the files a run wrote with its file tools (calls that succeeded). */
export function changedFiles(result: TurnResult, cwd: string): string[] {
  const files = new Set<string>()
  for (const call of result.toolCalls) {
    if ((call.name !== 'Write' && call.name !== 'Edit') || call.isError) continue
    const file = (call.input as { file_path?: unknown }).file_path
    if (typeof file === 'string') files.add(path.resolve(cwd, file))
  }
  return [...files].sort()
}
