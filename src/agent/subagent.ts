import type Anthropic from '@anthropic-ai/sdk'
import { NotFoundError } from '../errors.js'
import { loadAgentDefinitions } from './definitions/load.js'
import { resolveToolsForAgent } from './definitions/tool-filter.js'
import { resolveModel } from './model.js'
import type { AgentOutput } from './render.js'
import { allTools } from './tool-registry.js'
import type { PermissionCheck } from './tool.js'
import { COORDINATION_TOOL_NAMES } from './tools/names.js'
import { runTurn } from './turn.js'
import { findWorktreeRecord, worktreeNotice } from '../worktrees/notice.js'

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
  signal: AbortSignal
  output?: AgentOutput
}

/**
 * A one-off subagent (the lead's Agent tool without a name): a fresh conversation with the
 * type's own prompt and tools — no team tools, it only reports back — run to completion.
 * Resolves with its final text; a run cut short by maxTurns is marked partial.
 */
export async function runSubagent(req: SubagentRequest): Promise<string> {
  const { definitions } = await loadAgentDefinitions({ cwd: req.cwd, env: req.env })
  const typeName = req.agentType ?? 'general-purpose'
  const def = definitions.get(typeName)
  if (!def) throw new NotFoundError(`unknown agent type "${typeName}"`, { hint: `known types: ${[...definitions.keys()].join(', ')}` })
  const { model } = resolveModel({ spawnModel: req.model, definitionModel: def.model, leaderModel: req.leaderModel, env: req.env })
  const available = allTools().filter((t) => !(COORDINATION_TOOL_NAMES as readonly string[]).includes(t.name))
  const { tools: names } = resolveToolsForAgent(def, available.map((t) => t.name), { isTeammate: true })
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: req.prompt }]
  const worktree = await findWorktreeRecord(req.team, req.cwd, req.env).catch(() => undefined)
  const result = await runTurn({
    client: req.client,
    model,
    // The type's prompt is the cached prefix every run of this type shares; what names this run follows it.
    system: {
      static: def.systemPrompt,
      dynamic: `Working directory: ${req.cwd}\nYou are a one-off subagent of ${req.parent}: your final message is your report.` + (worktree ? `\n\n${worktreeNotice(worktree)}` : ''),
    },
    tools: available.filter((t) => names.includes(t.name)),
    messages,
    maxIterations: def.maxTurns ?? 50,
    signal: req.signal,
    toolContext: { cwd: req.cwd, signal: req.signal, agentName: req.parent, teamName: req.team, env: req.env, checkPermission: req.checkPermission },
    onToolEnd: (name, input, r, ms) => req.output?.tool(name, input, r, ms),
  })
  if (result.status === 'partial') return `(partial: stopped after ${result.iterations} model calls)\n${result.text}`
  if (result.status === 'aborted') return `(aborted)\n${result.text}`
  return result.text || '(the subagent ended without a report)'
}
