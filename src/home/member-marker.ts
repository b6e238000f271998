import { LEAD_NAME, agentId, teamDir } from './paths.js'

/*
 * The marker of a team member's processes (the variables are set by process/marker.ts): its
 * team, its agent id and the team's directory, which tells two teams of one name apart.
 */

export function memberMarker(team: string, name: string, env?: NodeJS.ProcessEnv): { team: string; agentId: string; teamDir: string } {
  return { team, agentId: agentId(name, team), teamDir: teamDir(team, env) }
}

/**
 * The teammate whose environment this is (`SWARM_AGENT_NAME`, else the name in `SWARM_AGENT_ID`,
 * as its pane was started); undefined for the lead's and for a shell outside any team. A guard
 * against a confused teammate, not a boundary: a shell can unset the variables.
 */
export function teammateOf(env: NodeJS.ProcessEnv): string | undefined {
  const id = env.SWARM_AGENT_ID
  const name = env.SWARM_AGENT_NAME || (id?.includes('@') ? id.slice(0, id.lastIndexOf('@')) : undefined)
  return name && name !== LEAD_NAME ? name : undefined
}
