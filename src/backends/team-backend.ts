import { LEAD_NAME } from '../home/paths.js'
import type { TeamFile } from '../teams/types.js'
import { HOSTED_VIEWS_FIELD } from '../teams/hosting.js'
import { isBackendType, showsHostedTeammates } from './registry.js'
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

/**
 * The pane backend that shows a hosted team's teammates (`team create --hosted`: they run inside
 * the leader, each shown in a pane), when the team records one that can; undefined on any other team.
 */
export function hostedViews(team: TeamFile): BackendType | undefined {
  const views = team[HOSTED_VIEWS_FIELD]
  return typeof views === 'string' && showsHostedTeammates(views) ? views : undefined
}
