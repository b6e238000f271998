import { z } from 'zod'

/** Backends a member can run on. */
export const BackendType = z.enum(['tmux', 'iterm2', 'in-process'])
export type BackendType = z.infer<typeof BackendType>

export const PermissionModeName = z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'bubble'])
export type PermissionModeName = z.infer<typeof PermissionModeName>

export const TeamAllowedPath = z.looseObject({
  path: z.string(),
  toolName: z.string(),
  addedBy: z.string(),
  addedAt: z.number(),
})
export type TeamAllowedPath = z.infer<typeof TeamAllowedPath>

/**
 * A member of a team, as Claude Code writes it in config.json. Unknown fields are kept
 * (looseObject), so a file written by a newer Claude Code survives a round trip through swarm.
 */
export const TeamMember = z.looseObject({
  agentId: z.string(),
  name: z.string(),
  agentType: z.string().optional(),
  model: z.string().optional(),
  prompt: z.string().optional(),
  color: z.string().optional(),
  planModeRequired: z.boolean().optional(),
  joinedAt: z.number(),
  tmuxPaneId: z.string(),
  cwd: z.string(),
  worktreePath: z.string().optional(),
  /** swarm's: start it in a worktree of its own (a string names the worktree); Claude Code ignores it. */
  worktree: z.union([z.boolean(), z.string()]).optional(),
  sessionId: z.string().optional(),
  subscriptions: z.array(z.string()).default([]),
  backendType: BackendType.optional(),
  isActive: z.boolean().optional(),
  mode: z.string().optional(),
  /** swarm's: the agent CLI it runs (`--agent codex`…; absent = swarm's own agent); Claude Code ignores it. */
  agent: z.string().optional(),
})
export type TeamMember = z.infer<typeof TeamMember>

/** `<root>/teams/<team>/config.json` */
export const TeamFile = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  createdAt: z.number(),
  leadAgentId: z.string(),
  leadSessionId: z.string().optional(),
  hiddenPaneIds: z.array(z.string()).optional(),
  teamAllowedPaths: z.array(TeamAllowedPath).optional(),
  members: z.array(TeamMember),
})
export type TeamFile = z.infer<typeof TeamFile>

export const TaskStatus = z.enum(['pending', 'in_progress', 'completed'])
export type TaskStatus = z.infer<typeof TaskStatus>

/** `<root>/tasks/<team>/<id>.json` */
export const Task = z.looseObject({
  id: z.string(),
  subject: z.string(),
  description: z.string(),
  activeForm: z.string().optional(),
  owner: z.string().optional(),
  status: TaskStatus,
  blocks: z.array(z.string()).default([]),
  blockedBy: z.array(z.string()).default([]),
  metadata: z.record(z.string(), z.unknown()).optional(),
})
export type Task = z.infer<typeof Task>
