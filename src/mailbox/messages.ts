import { z } from 'zod'

/**
 * Structured messages: JSON objects carried as the `text` of an inbox entry, discriminated by
 * `type`. Field names follow Claude Code's, so the two tools understand each other.
 */
const base = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape)

export const IdleNotification = base({
  type: z.literal('idle_notification'),
  from: z.string(),
  timestamp: z.string(),
  idleReason: z.enum(['available', 'interrupted', 'failed', 'budget_exhausted']).optional(),
  summary: z.string().optional(),
  completedTaskId: z.string().optional(),
  completedStatus: z.enum(['resolved', 'blocked', 'failed', 'partial']).optional(),
  failureReason: z.string().optional(),
})

export const PermissionRequest = base({
  type: z.literal('permission_request'),
  request_id: z.string(),
  agent_id: z.string(),
  tool_name: z.string(),
  tool_use_id: z.string(),
  description: z.string(),
  input: z.record(z.string(), z.unknown()),
  permission_suggestions: z.array(z.unknown()).default([]),
})

export const PermissionResponse = base({
  type: z.literal('permission_response'),
  request_id: z.string(),
  /** success = allowed; error = denied (the error text is the feedback). */
  subtype: z.enum(['success', 'error']),
  response: z
    .looseObject({
      updated_input: z.record(z.string(), z.unknown()).optional(),
      permission_updates: z.array(z.unknown()).optional(),
    })
    .optional(),
  error: z.string().optional(),
  /** Which call it answers (answer-binding.ts): a key-holding Claude Code teammate refuses an answer to another. */
  approved_request: z.object({ tool_use_id: z.string(), tool_name: z.string(), input_digest: z.string() }).optional(),
})

export const PlanApprovalRequest = base({
  type: z.literal('plan_approval_request'),
  from: z.string(),
  timestamp: z.string(),
  planFilePath: z.string(),
  planContent: z.string(),
  requestId: z.string(),
})

export const PlanApprovalResponse = base({
  type: z.literal('plan_approval_response'),
  requestId: z.string(),
  approved: z.boolean(),
  feedback: z.string().optional(),
  timestamp: z.string(),
  permissionMode: z.string().optional(),
  /** sha256 of the plan it approves (answer-binding.ts): Claude Code refuses an approval of another plan. */
  planDigest: z.string().optional(),
})

export const ShutdownRequest = base({
  type: z.literal('shutdown_request'),
  requestId: z.string(),
  from: z.string(),
  reason: z.string().optional(),
  timestamp: z.string(),
})

export const ShutdownApproved = base({
  type: z.literal('shutdown_approved'),
  requestId: z.string(),
  from: z.string(),
  timestamp: z.string(),
  paneId: z.string().optional(),
  backendType: z.string().optional(),
})

export const ShutdownRejected = base({
  type: z.literal('shutdown_rejected'),
  requestId: z.string(),
  from: z.string(),
  reason: z.string(),
  timestamp: z.string(),
})

export const TaskAssignment = base({
  type: z.literal('task_assignment'),
  taskId: z.string(),
  subject: z.string(),
  description: z.string(),
  assignedBy: z.string(),
  timestamp: z.string(),
})

export const ModeSetRequest = base({
  type: z.literal('mode_set_request'),
  mode: z.string(),
  from: z.string(),
})

export const TeammateTerminated = base({
  type: z.literal('teammate_terminated'),
  name: z.string(),
  message: z.string().optional(),
  timestamp: z.string(),
})

export const TeamPermissionUpdate = base({
  type: z.literal('team_permission_update'),
  permissionUpdate: z.looseObject({
    type: z.string(),
    rules: z.array(z.looseObject({ toolName: z.string(), ruleContent: z.string().optional() })),
    behavior: z.enum(['allow', 'deny', 'ask']),
    destination: z.string().optional(),
  }),
  directoryPath: z.string().optional(),
  toolName: z.string().optional(),
})

/**
 * swarm's own: any shell asks the running leader to start an in-process teammate (only the leader
 * process can host one). Counts only when signed by team-lead; Claude Code ignores the type.
 */
export const SpawnRequest = base({
  type: z.literal('spawn_request'),
  requestId: z.string(),
  from: z.string(),
  name: z.string(),
  agentType: z.string().optional(),
  model: z.string().optional(),
  mode: z.string().optional(),
  prompt: z.string().optional(),
  cwd: z.string().optional(),
  worktree: z.union([z.boolean(), z.string()]).optional(),
  maxCostUsd: z.number().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  timestamp: z.string(),
})

/**
 * swarm's own: `swarm team rekey` hands each running teammate the team's new lead public key, in a
 * message signed by the old key; a teammate that verifies it switches keys in every scheme (trust/gate).
 * Claude Code ignores it.
 */
export const LeadKeyUpdate = base({
  type: z.literal('lead_key_update'),
  from: z.string(),
  publicKey: z.string(),
  /** The recipient's new Claude-format key (`<ms>.<key>`) for `lead_sig`; absent, its old one is revoked. */
  leadVerifyKey: z.string().optional(),
  timestamp: z.string(),
})

/** swarm's own: team-lead asks a teammate to compact its conversation now (`swarm compact`). */
export const CompactRequest = base({
  type: z.literal('compact_request'),
  from: z.string(),
  focus: z.string().optional(),
  timestamp: z.string(),
})

/** swarm's own: team-lead raises a teammate's budget, or tells it the team's was raised (`swarm budget`). */
export const BudgetUpdate = base({
  type: z.literal('budget_update'),
  from: z.string(),
  addUsd: z.number().nonnegative().optional(),
  addTokens: z.number().int().nonnegative().optional(),
  scope: z.enum(['member', 'team']).default('member'),
  timestamp: z.string(),
})

export const StructuredMessage = z.discriminatedUnion('type', [
  IdleNotification,
  PermissionRequest,
  PermissionResponse,
  PlanApprovalRequest,
  PlanApprovalResponse,
  ShutdownRequest,
  ShutdownApproved,
  ShutdownRejected,
  TaskAssignment,
  ModeSetRequest,
  TeammateTerminated,
  TeamPermissionUpdate,
  SpawnRequest,
  LeadKeyUpdate,
  CompactRequest,
  BudgetUpdate,
])
export type StructuredMessage = z.infer<typeof StructuredMessage>
export type StructuredMessageType = StructuredMessage['type']
export type MessageOf<T extends StructuredMessageType> = Extract<StructuredMessage, { type: T }>

/** Types that only count when they come, signed, from team-lead. */
export const PRIVILEGED_TYPES: ReadonlySet<StructuredMessageType> = new Set([
  'permission_response',
  'plan_approval_response',
  'shutdown_request',
  'mode_set_request',
  'team_permission_update',
  'spawn_request',
  'lead_key_update',
  'compact_request',
  'budget_update',
])

/**
 * Parses the `text` of an inbox entry as a structured message; undefined for plain text or a
 * JSON object of an unknown type.
 */
export function parseStructured(text: string): StructuredMessage | undefined {
  const trimmed = text.trimStart()
  if (!trimmed.startsWith('{')) return undefined
  let raw: unknown
  try {
    raw = JSON.parse(trimmed)
  } catch {
    return undefined // plain text that happens to start with '{'
  }
  const parsed = StructuredMessage.safeParse(raw)
  return parsed.success ? parsed.data : undefined
}

/** Serializes a structured message as the `text` of an inbox entry. */
export function encodeStructured(message: StructuredMessage): string {
  return JSON.stringify(message)
}
