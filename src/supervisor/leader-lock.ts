import path from 'node:path'
import { ConflictError } from '../errors.js'
import { teamDir } from '../home/paths.js'
import { pidLockHolder, tryPidLock } from '../process/pid-lock.js'

/*
 * One leader per team: `teams/<team>/leader.pid` names the running leader (process/pid-lock.ts:
 * pid and start time, so a reused pid is not mistaken for it). A second leader is refused (exit
 * 4, naming the pid); a file left by a dead leader is taken over.
 */

export function leaderLockPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), 'leader.pid')
}

/** The pid of the team's running leader, from its lock file; undefined when none runs. */
export function runningLeader(team: string, env?: NodeJS.ProcessEnv): number | undefined {
  return pidLockHolder(leaderLockPath(team, env))?.pid
}

/** Takes the team's leader lock, or throws ConflictError (exit 4) naming the running leader. */
export function acquireLeaderLock(team: string, env?: NodeJS.ProcessEnv): { release(): void } {
  const r = tryPidLock(leaderLockPath(team, env))
  if ('lock' in r) return r.lock
  throw new ConflictError('SWARM_LEADER_RUNNING', `team ${team} already has a leader running (pid ${r.holder.pid})`, {
    hint: `use that one (swarm attach ${team}), or stop it first (kill ${r.holder.pid})`,
  })
}
