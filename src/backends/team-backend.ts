import { LEAD_NAME } from '../home/paths.js'
import type { TeamFile } from '../teams/types.js'
import { isBackendType } from './registry.js'
import type { BackendType } from './types.js'

/**
 * The backend a team runs on: recorded at creation (`swarmBackend`), else what its members here
 * use — a member on another machine (`host`) says nothing of where the team's leader runs.
 */
export function teamBackend(team: TeamFile): BackendType | undefined {
  const recorded = team.swarmBackend
  if (isBackendType(recorded)) return recorded
  const used = team.members.find((m) => m.name !== LEAD_NAME && m.host === undefined && isBackendType(m.backendType))?.backendType
  return used
}
