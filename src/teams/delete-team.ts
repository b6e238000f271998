import { ConflictError, CorruptFileError, NotFoundError } from '../errors.js'
import { pathExists } from '../util/fs.js'
import { LEAD_NAME, tasksDir, teamDir } from './paths.js'
import { deleteTeamFiles, readTeam } from './team-store.js'

export interface DeleteTeamOptions {
  /** Delete even with members marked active, or a config that does not parse. */
  force?: boolean
  env?: NodeJS.ProcessEnv
}

export interface DeleteTeamResult {
  team: string
  /** Members that were still marked active (deleted anyway with `force`). */
  active: string[]
}

/**
 * `swarm team delete`: removes a team's files (config, inboxes, tasks, scratchpad).
 * Without `force` it refuses while a teammate is marked active, and a corrupt config is reported
 * rather than deleted. Stopping live members comes first once the backends are wired in.
 */
export async function deleteTeam(team: string, opts: DeleteTeamOptions = {}): Promise<DeleteTeamResult> {
  const { env } = opts
  if (!(await pathExists(teamDir(team, env))) && !(await pathExists(tasksDir(team, env)))) {
    throw new NotFoundError(`no team named ${JSON.stringify(team)}`, { hint: 'see "swarm team list"' })
  }
  let active: string[] = []
  try {
    const config = await readTeam(team, env)
    active = config.members.filter((m) => m.name !== LEAD_NAME && m.isActive === true).map((m) => m.name)
  } catch (err) {
    // A team directory without a config (half-created, or left by a crash) is still deletable.
    if (err instanceof NotFoundError) active = []
    else if (err instanceof CorruptFileError && opts.force) active = []
    else throw err
  }
  if (active.length && !opts.force) {
    throw new ConflictError('SWARM_TEAM_ACTIVE', `team ${team} has active members: ${active.join(', ')}`, {
      hint: `stop them first, or delete anyway with "swarm team delete ${team} --force"`,
    })
  }
  await deleteTeamFiles(team, env)
  return { team, active }
}
