import fs from 'node:fs'

/*
 * Which inbox locks this process still owns. A holder stopped past the stale time (Ctrl-Z, a VM
 * pause) has lost its lock to another writer without knowing it; it must neither rename its old
 * copy over the inbox (commit.ts asks holdsLock just before) nor remove the new holder's lock
 * directory at its release. The lock directory's identity (inode and mtime, nanoseconds) is the
 * fencing token: recorded when this process makes the directory and each time it refreshes it,
 * compared with what is on disk. Nothing is written inside the directory, so Claude Code's and
 * older swarms' stale recovery (a plain rmdir) still works.
 */

/** An inbox lock held by a holder of this process but found on disk to be someone else's (or gone). */
export class LockLostError extends Error {
  constructor(readonly lockDir: string) {
    super(`lost the lock ${lockDir} (this process was stopped past its stale time)`)
    this.name = 'LockLostError'
  }
}

/** Lock directory → its identity as this process made or last refreshed it. */
const held = new Map<string, string>()

function identity(dir: string): string | undefined {
  const stat = fs.statSync(dir, { throwIfNoEntry: false, bigint: true })
  return stat && `${stat.dev}:${stat.ino}:${stat.mtimeNs}`
}

/** True while the lock directory on disk is still the one this process made and refreshed. */
export function holdsLock(lockDir: string): boolean {
  const mine = held.get(lockDir)
  return mine !== undefined && identity(lockDir) === mine
}

/** Forgets the lock (released, or reported compromised by proper-lockfile). */
export function forgetLock(lockDir: string): void {
  held.delete(lockDir)
}

/**
 * A fenced rmdir: a lock directory this process holds is removed only while it is still its own;
 * someone else's (taken over as stale while this process was stopped) is left in place. Any other
 * directory (a stale lock proper-lockfile recovers) is removed as asked.
 */
function rmdirFenced(dir: string): void {
  if (held.has(dir)) {
    const mine = holdsLock(dir)
    held.delete(dir)
    if (!mine) return
  }
  fs.rmdirSync(dir)
}

/**
 * proper-lockfile's fs calls made synchronously (the callback still comes on the next tick): each
 * asynchronous call is a thread-pool round trip, and under load the lock's mkdir + stat + rmdir
 * that way kept it held a few milliseconds longer per holder. The mkdir and utimes record the
 * fencing token, the rmdirs are fenced. Stable object: proper-lockfile caches the filesystem's
 * mtime precision on it.
 */
export const fencedFs = {
  mkdir: viaSync((dir: string) => {
    fs.mkdirSync(dir)
    const id = identity(dir)
    if (id) held.set(dir, id)
  }),
  rmdir: viaSync(rmdirFenced),
  stat: viaSync(fs.statSync),
  utimes: viaSync((dir: string, atime: Date, mtime: Date) => {
    fs.utimesSync(dir, atime, mtime)
    const id = held.has(dir) ? identity(dir) : undefined
    if (id) held.set(dir, id)
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
