import { loadAgentDefinitions } from './load.js'
import type { Env } from '../../home/env.js'

/**
 * Whether a teammate gets a worktree: an explicit `worktree` wins; else its agent definition's
 * `isolation: worktree` (definitions as seen from `cwd`, the lead's project).
 */
export async function wantsWorktree(o: { worktree?: boolean | string; agentType?: string; cwd: string; env?: Env }): Promise<boolean> {
  if (o.worktree !== undefined) return o.worktree !== false
  if (!o.agentType) return false
  const { definitions } = await loadAgentDefinitions({ cwd: o.cwd, ...(o.env ? { env: o.env } : {}) })
  return definitions.get(o.agentType)?.isolation === 'worktree'
}
