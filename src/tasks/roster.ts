import { deleteMemberFiles, removeMember } from '../teams/team-store.js'
import { releaseTasksOf } from './task-store.js'

/**
 * Takes a teammate off the roster and returns its unfinished tasks to `pending` with no owner
 * (never the lead), then removes its files (agent dir, inbox, agent home). The roster change comes
 * first: a task released while the member is still listed could be claimed by it again.
 */
export async function removeFromRoster(team: string, name: string, env?: NodeJS.ProcessEnv): Promise<void> {
  await removeMember(team, name, env)
  await releaseTasksOf(team, name, env)
  await deleteMemberFiles(team, name, env)
}
