import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { ConflictError } from '../errors.js'
import { teamDir } from '../home/paths.js'
import { onExit } from '../process/handlers.js'
import { isAlive } from '../process/liveness.js'
import { procStartTime } from '../process/table.js'
import { FILE_MODE } from '../util/fs.js'

/*
 * One leader per team: `teams/<team>/leader.pid` names the running leader (pid and start time,
 * so a reused pid is not mistaken for it). A second leader is refused (exit 4, naming the pid);
 * a file left by a dead leader is taken over.
 */

const LockFile = z.object({ pid: z.number().int().positive(), started: z.string().optional() })
type LockFile = z.infer<typeof LockFile>

export function leaderLockPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), 'leader.pid')
}

/** The pid of the team's running leader, from its lock file; undefined when none runs. */
export function runningLeader(team: string, env?: NodeJS.ProcessEnv): number | undefined {
  const holder = readLock(leaderLockPath(team, env))
  return holder && holderAlive(holder) ? holder.pid : undefined
}

/** Held in this process: released by release() or when the process exits. */
const held = new Set<string>()

/** Takes the team's leader lock, or throws ConflictError (exit 4) naming the running leader. */
export function acquireLeaderLock(team: string, env?: NodeJS.ProcessEnv): { release(): void } {
  const file = leaderLockPath(team, env)
  const mine: LockFile = { pid: process.pid, ...definedStart(process.pid) }
  const text = JSON.stringify(mine)
  for (let attempt = 0; ; attempt++) {
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`
    fs.writeFileSync(tmp, text, { mode: FILE_MODE, flag: 'wx' })
    try {
      fs.linkSync(tmp, file) // atomic: fails when a lock file exists
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err
    } finally {
      fs.rmSync(tmp, { force: true })
    }
    const holder = readLock(file)
    if (holder && holderAlive(holder) && (holder.pid !== process.pid || held.has(file))) {
      throw new ConflictError('SWARM_LEADER_RUNNING', `team ${team} already has a leader running (pid ${holder.pid})`, {
        hint: `use that one (swarm attach ${team}), or stop it first (kill ${holder.pid})`,
      })
    }
    takeOverStale(file, holder)
  }
  held.add(file)
  const disposeExit = onExit(() => removeIfMine(file, text))
  let released = false
  return {
    release() {
      if (released) return
      released = true
      held.delete(file)
      disposeExit()
      removeIfMine(file, text)
    },
  }
}

function definedStart(pid: number): { started?: string } {
  const started = procStartTime(pid)
  return started === undefined ? {} : { started }
}

function holderAlive(holder: LockFile): boolean {
  if (!isAlive(holder.pid)) return false
  return holder.started === undefined || procStartTime(holder.pid) === undefined || procStartTime(holder.pid) === holder.started
}

function readLock(file: string): LockFile | undefined {
  try {
    return LockFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')))
  } catch {
    return undefined // missing, or unreadable: nobody can be named as its holder
  }
}

/**
 * Moves a dead leader's file out of the way. It is renamed first and checked: if a new leader
 * replaced it in between, that one's file is put back (and the next attempt sees it running).
 */
function takeOverStale(file: string, stale: LockFile | undefined): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    fs.renameSync(file, aside)
  } catch {
    return // gone already: the next attempt links
  }
  const moved = readLock(aside)
  if (moved && stale && moved.pid !== stale.pid && holderAlive(moved)) {
    try {
      fs.linkSync(aside, file)
    } catch {
      // someone holds it now; the next attempt names them
    }
  }
  fs.rmSync(aside, { force: true })
}

function removeIfMine(file: string, text: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === text) fs.rmSync(file, { force: true })
  } catch {
    // gone (the team was deleted)
  }
}
