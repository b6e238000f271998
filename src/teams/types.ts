import { z } from 'zod'

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
  /** The backend's name (backends/registry.ts checks it; Claude Code writes its own). */
  backendType: z.string().optional(),
  isActive: z.boolean().optional(),
  mode: z.string().optional(),
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
