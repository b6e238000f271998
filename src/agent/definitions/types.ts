import type { AgentColor } from '../../home/colors.js'
import type { PermissionModeName } from '../../permissions/rules/modes.js'

/** Where a definition came from; project beats user beats built-in. */
export type AgentSource = 'built-in' | 'user' | 'project'

/** One agent type: what `--agent-type` / `subagent_type` names. */
export interface AgentDefinition {
  /** The agent type's name (frontmatter `name`). */
  name: string
  /** When to use this type; shown to the lead. */
  description: string
  /** Allow-list of tool names; undefined or `['*']` means every tool. */
  tools?: string[]
  /** Tools removed after the allow-list. */
  disallowedTools: string[]
  /** A model id or alias, or `inherit`; undefined = the default resolution (docs/architecture.md §8). */
  model?: string
  permissionMode?: PermissionModeName
  maxTurns?: number
  /** The budget of an agent of this type (frontmatter `maxCostUsd`, `maxTokens`). */
  maxCostUsd?: number
  maxTokens?: number
  isolation?: 'worktree'
  /** Where agents of this type run (`host:` in the frontmatter, a RemoteHost spec); undefined = this machine. */
  host?: string
  color?: AgentColor
  /** Run with this agent CLI adapter (`agent:` in the frontmatter); undefined = swarm's own agent. */
  agent?: string
  /** The system prompt (the Markdown body for file definitions). */
  systemPrompt: string
  source: AgentSource
  /** The Markdown file it was loaded from. */
  file?: string
  /**
   * The runtime gives this agent a fresh temporary directory, passes it as
   * `ToolContext.writableRoots` (Write/Edit may write only there) and names it in the prompt
   * (`scratchDirNote`). Used by Verification.
   */
  writableTempDir?: boolean
}

/** A problem with one definition file. Errors skip that file; warnings keep it. */
export interface AgentDefinitionDiagnostic {
  file: string
  /** The frontmatter field at fault, when there is one. */
  field?: string
  message: string
  severity: 'error' | 'warning'
}

export interface LoadedAgentDefinitions {
  /** By name, after precedence (project over user over built-in). */
  definitions: Map<string, AgentDefinition>
  diagnostics: AgentDefinitionDiagnostic[]
}
