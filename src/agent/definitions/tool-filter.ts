import type { PermissionModeName } from '../../permissions/rules/modes.js'
import type { AgentDefinition } from './types.js'

/**
 * Layer 2: tools a user-defined agent type never gets, whatever its `tools` says. Agent files
 * come with the project (a cloned repository), so they may not make agents that spawn or stop
 * other agents.
 */
export const USER_DEFINED_DISALLOWED_TOOLS: readonly string[] = ['Agent', 'TaskStop', 'Batch']

export interface ToolFilterOptions {
  /** A teammate (not the lead): loses the lead-only tools (Agent, TaskStop). */
  isTeammate: boolean
  /** Default: the definition's source is not built-in. */
  isUserDefined?: boolean
  /** The agent's effective permission mode; default the definition's. ExitPlanMode needs 'plan'. */
  permissionMode?: PermissionModeName
}

export type ToolFilterLayer = 'all-agents' | 'teammate' | 'user-defined' | 'agent-type'

export interface RemovedTool {
  tool: string
  layer: ToolFilterLayer
  reason: string
}

export interface ToolFilterResult {
  /** The tools the agent gets, in the order of `allToolNames`. */
  tools: string[]
  /** Each removed tool with the first layer that removed it. */
  removed: RemovedTool[]
}

/**
 * The tools an agent of type `def` may use, filtered in layers — a later layer can only
 * remove, never give back what an earlier one took:
 *  1. all agents: ExitPlanMode only in plan mode; teammates: no lead-only tools (Agent, TaskStop);
 *  2. user-defined types: no USER_DEFINED_DISALLOWED_TOOLS;
 *  3. the type's own `tools` allow-list (`*` or absent = all), then its `disallowedTools`.
 */
/** What the filter needs to know of a tool: its name and whether only the lead may have it (declared on the tool). */
export interface ToolInfo {
  name: string
  leadOnly?: boolean
}

export function resolveToolsForAgent(def: AgentDefinition, allTools: readonly ToolInfo[], options: ToolFilterOptions): ToolFilterResult {
  const isUserDefined = options.isUserDefined ?? def.source !== 'built-in'
  const mode = options.permissionMode ?? def.permissionMode
  const allowList = def.tools && !def.tools.includes('*') ? new Set(def.tools) : undefined
  const denyList = new Set(def.disallowedTools)
  const tools: string[] = []
  const removed: RemovedTool[] = []

  for (const info of allTools) {
    const why = removalReason(info)
    if (why) removed.push({ tool: info.name, ...why })
    else tools.push(info.name)
  }
  return { tools, removed }

  function removalReason({ name: tool, leadOnly }: ToolInfo): Omit<RemovedTool, 'tool'> | undefined {
    if (tool === 'ExitPlanMode' && mode !== 'plan') {
      return { layer: 'all-agents', reason: 'ExitPlanMode is only available in plan mode' }
    }
    if (options.isTeammate && leadOnly) {
      return { layer: 'teammate', reason: `${tool} is for the team lead only` }
    }
    if (isUserDefined && USER_DEFINED_DISALLOWED_TOOLS.includes(tool)) {
      return { layer: 'user-defined', reason: `user-defined agent types may not use ${tool}` }
    }
    if (allowList && !allowList.has(tool)) {
      return { layer: 'agent-type', reason: `not in the tools of agent type ${def.name}` }
    }
    if (denyList.has(tool)) {
      return { layer: 'agent-type', reason: `in the disallowedTools of agent type ${def.name}` }
    }
    return undefined
  }
}
