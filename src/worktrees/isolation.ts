import { loadAgentDefinitions } from '../agent/definitions/load.js'
import { errorMessage } from '../errors.js'
import type { TeamMember } from '../teams/types.js'
import { pathExists } from '../util/fs.js'
import { removeWorktree } from './worktree.js'

type Env = NodeJS.ProcessEnv

/**
 * Whether a teammate gets a worktree: an explicit `worktree` wins; else its agent definition's
 * `isolation: worktree` (definitions as seen from `cwd`, the lead's project).
 */
export async function wantsWorktree(o: { worktree?: boolean; agentType?: string; cwd: string; env?: Env }): Promise<boolean> {
  if (o.worktree !== undefined) return o.worktree
  if (!o.agentType) return false
  const { definitions } = await loadAgentDefinitions({ cwd: o.cwd, ...(o.env ? { env: o.env } : {}) })
  return definitions.get(o.agentType)?.isolation === 'worktree'
}

/** What removeTeamWorktrees left behind, for the user to look at. */
export interface TeamWorktreesReport {
  removed: string[]
  /** Worktrees kept: uncommitted changes, or git could not remove them. */
  kept: string[]
  /** `swarm/…` branches kept because they hold commits that are not merged. */
  branchesKept: string[]
  /** One line per kept worktree or branch, saying why. */
  notes: string[]
}

/** Removes every member's worktree that is clean (team delete); dirty ones and unmerged branches stay. */
export async function removeTeamWorktrees(members: TeamMember[], env: Env): Promise<TeamWorktreesReport> {
  const report: TeamWorktreesReport = { removed: [], kept: [], branchesKept: [], notes: [] }
  for (const m of members) {
    if (!m.worktreePath || !(await pathExists(m.worktreePath))) continue
    try {
      const r = await removeWorktree(m.worktreePath, { env })
      if (r.removed) report.removed.push(m.worktreePath)
      else report.kept.push(m.worktreePath)
      if (r.branch && r.branchDeleted === false) report.branchesKept.push(r.branch)
      if (r.reason) report.notes.push(`${m.name}: ${r.reason}`)
    } catch (err) {
      report.kept.push(m.worktreePath)
      report.notes.push(`${m.name}: could not remove ${m.worktreePath}: ${errorMessage(err)}`)
    }
  }
  return report
}
