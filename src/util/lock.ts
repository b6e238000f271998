import fs from 'node:fs/promises'
import path from 'node:path'
import { LockTimeoutError } from '../errors.js'
import { FILE_MODE, ensureDir } from './fs.js'
import { LOCK_STALE_MS, LockLostError, fencedFs, forgetLock, withFence } from './lock-fence.js'

export { LOCK_STALE_MS } from './lock-fence.js'

/** How many times a holder that lost its lock while stopped starts again under a fresh one. */
const LOST_LOCK_RETRIES = 3

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
  /**
   * False: never make `file`'s directory (a lock on something of a directory that may be removed
   * meanwhile, whose lock must not make it again); a missing directory is ENOENT from the lock.
   */
  makeDir?: boolean
}

/**
 * Runs `fn` while holding the proper-lockfile lock on `file` (lock dir `<file>.lock`).
 * Locks are not re-entrant: never call withLock on the same file from inside `fn`.
 * Fenced (lock-fence.ts): a holder stopped past the stale time, whose lock another writer took
 * over meanwhile, renames nothing into place (atomicWriteFile refuses) and runs `fn` again, from
 * its read, under a fresh lock; so `fn` must write only through atomicWriteFile, last.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  if (options.makeDir !== false) await ensureDir(path.dirname(file))
  if (options.initial !== undefined) {
    // 'wx' so that an existing file (possibly someone else's content) is never truncated.
    await fs.writeFile(file, options.initial, { flag: 'wx', mode: FILE_MODE }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err
    })
  }
  const lockDir = options.lockfilePath ?? `${file}.lock`
  for (let attempt = 0; ; attempt++) {
    const release = await acquire(file, lockDir)
    try {
      return await withFence(lockDir, fn)
    } catch (err) {
      if (!(err instanceof LockLostError && err.lockDir === lockDir) || attempt >= LOST_LOCK_RETRIES) throw err
    } finally {
      await release().catch(() => {
        // Already released or compromised (reported by onCompromised); nothing left to undo.
      })
    }
  }
}

async function acquire(file: string, lockDir: string): Promise<() => Promise<void>> {
  try {
    return await (await properLockfile()).lock(file, {
      lockfilePath: lockDir,
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: RETRIES,
      fs: fencedFs,
      onCompromised: (err) => {
        // The default throws from a timer and crashes the process. From now on the fence refuses
        // this holder's commit (it is run again under a fresh lock).
        forgetLock(lockDir)
        process.stderr.write(`swarm: warning: lock on ${file} was compromised: ${err.message}\n`)
      },
    })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') throw new LockTimeoutError(file, { cause: err })
    throw err
  }
}

let library: Promise<typeof import('proper-lockfile')> | undefined

/**
 * proper-lockfile, loaded at the first lock: a CLI call that only reads (`swarm status`) does not
 * pay for it and graceful-fs (bench/cli.mjs).
 */
export function properLockfile(): Promise<typeof import('proper-lockfile')> {
  library ??= import('proper-lockfile').then((m) => m.default)
  return library
}
