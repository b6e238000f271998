import { ConflictError } from '../errors.js'
import { teammateOf } from '../home/member-marker.js'

/**
 * Commands that answer permission requests or sign as team-lead refuse to run from a teammate's
 * environment (exit 4): a guard against a confused or naive teammate, not a boundary (its shell
 * could unset the variables; swarm's own teammates' commands run in the bwrap sandbox).
 */
export function refuseFromTeammate(env: NodeJS.ProcessEnv = process.env): void {
  const who = teammateOf(env)
  if (who === undefined) return
  throw new ConflictError('SWARM_NOT_LEAD', `only the lead answers permission requests or speaks as team-lead (this is ${who}'s shell)`, {
    hint: 'ask team-lead with swarm send',
  })
}
