import { agentId, teamDir } from './paths.js'

/*
 * The marker of a team member's processes (the variables are set by process/marker.ts): its
 * team, its agent id and the team's directory, which tells two teams of one name apart.
 */

export function memberMarker(team: string, name: string, env?: NodeJS.ProcessEnv): { team: string; agentId: string; teamDir: string } {
  return { team, agentId: agentId(name, team), teamDir: teamDir(team, env) }
}
