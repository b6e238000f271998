import { LEAD_NAME } from '../home/paths.js'
import type { BackendType, TeamFile } from './types.js'

/** The backend a team runs on: recorded at creation (`swarmBackend`), else what its members use. */
export function teamBackend(team: TeamFile): BackendType | undefined {
  const recorded = team.swarmBackend
  if (recorded === 'tmux' || recorded === 'iterm2' || recorded === 'in-process') return recorded
  return team.members.find((m) => m.name !== LEAD_NAME && m.backendType)?.backendType
}
