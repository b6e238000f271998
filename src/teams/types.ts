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
  /** A member on another machine: `user@host[:port]` (`--host`, `host:`), reached over ssh (src/remote/). */
  host: z.string().optional(),
  /**
   * swarm's, in a host's mirror of a team (src/remote/): the member lives on another machine (the
   * lead's, or another host) — its inbox here is relayed out, never read here. Absent: it is resident.
   */
  elsewhere: z.boolean().optional(),
  isActive: z.boolean().optional(),
  mode: z.string().optional(),
  /** swarm's: the member's spending limit in USD / in tokens (`--max-cost`, `--max-tokens`). */
  maxCostUsd: z.number().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  /** swarm's: the agent CLI it runs (`--agent codex`…; absent = swarm's own agent); Claude Code ignores it. */
  agent: z.string().optional(),
  /**
   * swarm's: it reads and consumes its inbox itself and reports its activity in `isActive` (Claude
   * Code's team protocol) — its adapter's `ownsInbox`, recorded when the member is written.
   */
  ownsInbox: z.boolean().optional(),
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
  /** swarm's: the team's spending limit, all members together (`swarm budget <team> --add`). */
  budget: z.looseObject({ maxCostUsd: z.number().positive().optional(), maxTokens: z.number().int().positive().optional() }).optional(),
})
export type TeamFile = z.infer<typeof TeamFile>
