import fs from 'node:fs/promises'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { LockTimeoutError } from '../errors.js'
import { FILE_MODE, ensureDir } from './fs.js'

/**
 * A lock is considered abandoned after this long without its mtime being refreshed; a SIGKILLed
 * holder is recovered after it. proper-lockfile refreshes the lock every stale/2.
 */
export const LOCK_STALE_MS = 4_000

/**
 * Short randomized retries: proper-lockfile's defaults (1 s minimum) starve waiters. The total
 * budget (~400 × ≤40 ms ≈ 10 s) is longer than `stale`, so a waiter outlives a dead holder, and
 * holds up under 16 concurrent writers.
 */
const RETRIES = { retries: 400, minTimeout: 2, maxTimeout: 40, factor: 1.3, randomize: true }

export interface LockOptions {
  /** Path of the lock directory; defaults to `<file>.lock` (the path Claude Code uses). */
  lockfilePath?: string
  /** Create `file` first (empty content `initial`) when it does not exist. */
  initial?: string
}

/**
 * Runs `fn` while holding the proper-lockfile lock on `file` (lock dir `<file>.lock`).
 * Locks are not re-entrant: never call withLock on the same file from inside `fn`.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  await ensureDir(path.dirname(file))
  if (options.initial !== undefined) {
    // 'wx' so that an existing file (possibly someone else's content) is never truncated.
    await fs.writeFile(file, options.initial, { flag: 'wx', mode: FILE_MODE }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err
    })
  }
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(file, {
      lockfilePath: options.lockfilePath ?? `${file}.lock`,
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: RETRIES,
      onCompromised: (err) => {
        // The default throws from a timer and crashes the process; a compromised lock (e.g. the
        // machine stalled past `stale`) is reported and the write still completes atomically.
        process.stderr.write(`swarm: warning: lock on ${file} was compromised: ${err.message}\n`)
      },
    })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') throw new LockTimeoutError(file, { cause: err })
    throw err
  }
  try {
    return await fn()
  } finally {
    await release().catch(() => {
      // Already released or compromised (reported by onCompromised); nothing left to undo.
    })
  }
}
