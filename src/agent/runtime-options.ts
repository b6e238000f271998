import type Anthropic from '@anthropic-ai/sdk'
import type { StructuredMessage } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import type { BudgetLimit } from './budget.js'
import type { CacheSetting, SystemPrompt } from './cache-layout.js'
import type { AgentOutput } from './render.js'
import type { AgentStateFile } from './state.js'
import type { AnyTool as Tool, PermissionCheck } from './tool.js'
import type { Transcript } from './transcript.js'
import type { GuardOptions } from './turn-guards.js'
import type { LeadVerdict } from '../trust/gate.js'
import type { BashSandbox } from '../sandbox/types.js'

/* What a TeammateRuntime is built from (assembled by start.ts), and what its turns report back. */

type MessageParam = Anthropic.MessageParam

/** What a turn did that the runtime needs to know (filled in by the team tools). */
export interface TurnLog {
  completedTaskIds: string[]
  shutdownResponses: Map<string, { approve: boolean; reason?: string }>
}

export interface RuntimeOptions {
  team: string
  name: string
  cwd: string
  env: NodeJS.ProcessEnv
  client: Anthropic
  model: string
  mode?: string
  system: SystemPrompt | string
  /** Prompt caching of this agent's requests (settings `promptCacheTtl`; default on, 5 m). */
  cache?: CacheSetting
  tools: Tool[]
  /** The tools for a permission mode (the mode can change while the agent runs); default `tools`. */
  toolsForMode?(mode: string): Tool[]
  /** Model calls per turn before the turn is cut short as partial (the definition's maxTurns). */
  maxIterations: number
  output: AgentOutput
  transcript: Transcript
  state: AgentStateFile
  /** The conversation so far (rebuilt from the transcript with --resume). */
  messages: MessageParam[]
  turnLog: TurnLog
  /** Judges a privileged message that names team-lead as its sender (signature for this teammate, not acted on before). */
  verifyLead(entry: InboxMessage): LeadVerdict | Promise<LeadVerdict>
  checkPermission: PermissionCheck
  /** Called for privileged control messages that verified (permission answers, mode changes…). */
  onControl?(message: StructuredMessage, entry: InboxMessage): void | Promise<void>
  /** Claim the next unowned, unblocked task when idle with an empty inbox. */
  autoClaimTasks?: boolean
  /** Stops the agent from outside (SIGTERM, the in-process backend's kill). */
  signal?: AbortSignal
  /**
   * The lead's console owns the team-lead inbox and hands messages in with `deliver()`; the
   * runtime then does not watch the inbox itself.
   */
  external?: boolean
  /** Decides, before the default handling, what happens to a new message (the lead routes requests to its console). */
  route?(entry: InboxMessage, structured: StructuredMessage | undefined): 'default' | 'consume' | 'queue'
  color?: string
  /** Runs when the loop ends (the permission layer cancels what it still waits for). */
  onExit?(): void | Promise<void>
  /** Write and Edit may write only inside these (Verification's scratch directory). */
  writableRoots?: string[]
  /** Where Bash commands run (see ToolContext.sandbox). */
  sandbox: BashSandbox
  /** This agent's spending limit (spawn flags, team file, definition); none by default. */
  budget?: BudgetLimit
  /** The team's limit and what its members spent together. */
  teamBudget?: GuardOptions['teamBudget']
}
