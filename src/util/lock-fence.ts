import { AsyncLocalStorage } from 'node:async_hooks'
import fs from 'node:fs'

/**
 * A lock is considered abandoned after this long without its mtime being refreshed; a SIGKILLed
 * holder is recovered after it. proper-lockfile refreshes the lock every stale/2.
 */
export const LOCK_STALE_MS = 4_000

/*
 * Which locks (inboxes, config.json, task files) this process still owns. A holder stopped past the stale time (Ctrl-Z, a VM
 * pause) has lost its lock to another writer without knowing it; it must neither rename its old
 * copy over the file (commit.ts asks holdsLock just before, atomicWriteFile asks assertFencesHeld) nor remove the new holder's lock
 * directory at its release. The lock directory's identity (inode, birth time and an mtime stamped
 * to a random nanosecond) is the fencing token: recorded when this process makes the directory and
 * each time it refreshes it, compared with what is on disk. Nothing is written inside the
 * directory, so Claude Code's and older swarms' stale recovery (a plain rmdir) still works. What
 * no check can close: a stop of 4 s landing between the last check and the rename (microseconds).
 */

/** A lock held by a holder of this process but found on disk to be someone else's (or gone). */
export class LockLostError extends Error {
  constructor(readonly lockDir: string) {
    super(`lost the lock ${lockDir} (this process was stopped past its stale time)`)
    this.name = 'LockLostError'
  }
}

/** Lock directory → its identity as this process made or last refreshed it. */
const held = new Map<string, string>()
/** Lock directory → the identity it had when proper-lockfile last stat'ed it (to judge it stale). */
const judged = new Map<string, string>()
/**
 * Lock directories this process has just made whose acquisition is not finished: proper-lockfile's
 * first acquisition in a process probes the filesystem's mtime precision with a utimes right after
 * the mkdir (later ones only stat). A holder stopped between the two may find the directory taken
 * over: that probe must read as "held by someone else" (a lost race, tried again), not as an error
 * that ends the writer, nor touch the new holder's directory.
 */
const acquiring = new Set<string>()

/** proper-lockfile's own code for a lock someone else holds: the waiter tries again. */
function heldElsewhere(dir: string): Error {
  return Object.assign(new Error(`the lock ${dir} was taken over while this process was stopped`), { code: 'ELOCKED', file: dir })
}

/**
 * A holder's token: device, inode, birth and modification time to the nanosecond. Every holder
 * stamps its mtime with a random fraction of a millisecond (stamp), so two holders' tokens differ
 * even when the filesystem reuses the inode within the same millisecond.
 */
function identity(dir: string): string | undefined {
  const stat = fs.statSync(dir, { throwIfNoEntry: false, bigint: true })
  return stat && tokenOf(stat)
}

function tokenOf(stat: fs.BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.birthtimeNs}:${stat.mtimeNs}`
}

/**
 * Sets the lock directory's mtime to `ms` plus a random fraction of a millisecond: proper-lockfile
 * compares mtimes to the millisecond (Date), the fence to the nanosecond.
 */
function stamp(dir: string, ms: number): void {
  const seconds = (Math.floor(ms) + Math.random() * 0.99) / 1000
  fs.utimesSync(dir, seconds, seconds)
}

/**
 * Records `dir` as this process's with its token as it is now, unless this took so long (the
 * process was stopped since `since`) that another writer may have taken the lock over meanwhile.
 */
function record(dir: string, since: number): void {
  const id = identity(dir)
  if (id !== undefined && Date.now() - since < LOCK_STALE_MS / 2) held.set(dir, id)
  else held.delete(dir)
}

/** True while the lock directory on disk is still the one this process made and refreshed. */
export function holdsLock(lockDir: string): boolean {
  const mine = held.get(lockDir)
  return mine !== undefined && identity(lockDir) === mine
}

/** The lock directories the current async context holds through withFileLock, outermost first. */
const context = new AsyncLocalStorage<readonly string[]>()

/** Runs `fn` with `lockDir` added to the locks its writes must still hold when they commit. */
export function withFence<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  return context.run([...(context.getStore() ?? []), lockDir], fn)
}

/**
 * Throws LockLostError when a lock the current context took with withFence is no longer this
 * process's: called by atomicWriteFile just before its rename, so a stale holder commits nothing.
 */
export function assertFencesHeld(): void {
  for (const dir of context.getStore() ?? []) if (!holdsLock(dir)) throw new LockLostError(dir)
}

/** Forgets the lock (released, or reported compromised by proper-lockfile). */
export function forgetLock(lockDir: string): void {
  held.delete(lockDir)
}

/**
 * A fenced rmdir. A lock directory this process holds is removed only while it is still its own;
 * someone else's (taken over as stale while this process was stopped) is left in place. A stale
 * one that proper-lockfile recovers is removed only if it is still the directory it judged stale:
 * between its stat and its rmdir another writer may have recovered it first and made a fresh one,
 * which a plain rmdir would take from under it (two holders at once).
 */
function rmdirFenced(dir: string): void {
  if (acquiring.delete(dir) && !holdsLock(dir)) {
    held.delete(dir)
    return // its probe was refused: the directory may be another holder's now
  }
  if (held.has(dir)) {
    const mine = holdsLock(dir)
    held.delete(dir)
    if (!mine) return
  } else {
    const seen = judged.get(dir)
    judged.delete(dir)
    if (seen !== undefined && identity(dir) !== seen) return // replaced meanwhile: the next attempt finds it held
  }
  fs.rmdirSync(dir)
}

/**
 * proper-lockfile's fs calls made synchronously (the callback still comes on the next tick): each
 * asynchronous call is a thread-pool round trip, and under load the lock's mkdir + stat + rmdir
 * that way kept it held a few milliseconds longer per holder. The mkdir and utimes stamp and
 * record the fencing token, the stat remembers what was judged stale, the rmdirs are fenced.
 * Stable object: proper-lockfile caches the filesystem's mtime precision on it.
 */
export const fencedFs = {
  mkdir: viaSync((dir: string) => {
    const since = Date.now()
    fs.mkdirSync(dir)
    acquiring.add(dir)
    stamp(dir, Date.now())
    record(dir, since)
  }),
  rmdir: viaSync(rmdirFenced),
  stat: viaSync((file: string) => {
    acquiring.delete(file) // the probe's stat (and every refresh's, which comes before its utimes)
    const stat = fs.statSync(file, { bigint: true }) // its Dates are what proper-lockfile reads
    judged.set(file, tokenOf(stat))
    return stat
  }),
  utimes: viaSync((dir: string, atime: Date, mtime: Date) => {
    if (acquiring.has(dir)) {
      // the precision probe: refused (and the directory left to its cleanup, rmdirFenced) when lost while stopped
      if (!holdsLock(dir)) throw heldElsewhere(dir)
      acquiring.delete(dir)
    }
    if (!held.has(dir)) return fs.utimesSync(dir, atime, mtime)
    // proper-lockfile's refresh: only of a directory still ours (ENOENT makes it report the lock compromised).
    if (!holdsLock(dir)) throw Object.assign(new Error(`the lock ${dir} is no longer this process's`), { code: 'ENOENT' })
    const since = Date.now()
    stamp(dir, mtime.getTime())
    record(dir, since)
  }),
  realpath: viaSync(fs.realpathSync),
  rmdirSync: rmdirFenced,
}

function viaSync<A extends unknown[], R>(fn: (...args: A) => R) {
  return (...args: [...A, (err: Error | null, result?: R) => void]) => {
    const callback = args.pop() as (err: Error | null, result?: R) => void
    let result: R
    try {
      result = fn(...(args as unknown as A))
    } catch (err) {
      process.nextTick(callback, err as Error)
      return
    }
    process.nextTick(callback, null, result)
  }
}
