import fs from 'node:fs'
import { LockTimeoutError } from '../errors.js'
import { LOCK_STALE_MS, properLockfile } from '../util/lock.js'
import { raiseHand, ringBell } from './bell.js'
import { fencedFs, forgetLock, LockLostError } from '../util/lock-fence.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { type PathWatch, watchPath } from '../watch/path-watch.js'
import type { Slot } from './slot.js'

/*
 * The inbox lock as appenders and markers take it: the proper-lockfile lock of util/lock.ts (lock
 * directory `<inbox>.lock`, the one Claude Code takes), tried once at a time, with waiters woken
 * by events rather than by randomized sleeps: writers by the spool's bell (bell.ts), markers by a
 * watch on the lock directory. Fenced (lock-fence.ts): a holder that lost the lock while stopped
 * neither commits nor removes the new holder's lock.
 */

/** How long an append or a mark waits for the inbox lock (longer than a dead holder's stale time). */
export const LOCK_WAIT_MS = 12_000

/**
 * The timer of a waiter whose watches could not be set up: randomized, growing 1–10 ms (×1–2).
 * Short, because then nothing else tells it that its slot was merged or the lock released.
 */
export function backoffMs(attempt: number): number {
  return Math.min(1.5 ** attempt, 10) * (1 + Math.random())
}

/**
 * True when the inbox lock directory exists and is fresh: a failed proper-lockfile attempt costs
 * a mkdir, a stat and an Error, this one stat. Advisory only; tryLock decides.
 */
export function lockLooksHeld(inboxFile: string): boolean {
  const stat = fs.statSync(`${inboxFile}.lock`, { throwIfNoEntry: false })
  return stat !== undefined && Date.now() - stat.mtimeMs < LOCK_STALE_MS
}

/**
 * One attempt at the inbox lock, with the options of util/lock.ts (same lock directory, stale
 * recovery, no crash on compromise); undefined when someone else holds it.
 */
export async function tryLock(inboxFile: string): Promise<(() => Promise<void>) | undefined> {
  try {
    return await (await properLockfile()).lock(inboxFile, {
      lockfilePath: `${inboxFile}.lock`,
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: 0,
      fs: fencedFs,
      onCompromised: (err) => {
        forgetLock(`${inboxFile}.lock`) // from now on holdsLock is false: the commit in progress is not renamed into place
        process.stderr.write(`swarm: warning: lock on ${inboxFile} was compromised: ${err.message}\n`)
      },
    })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return undefined
    throw err
  }
}

/**
 * Runs `fn` holding the inbox lock (markRead, markDelivered, the watcher's flush). Woken when the
 * lock directory goes away rather than by randomized sleeps, which under load found the lock free
 * so rarely that the recipient's markRead waited up to ~0.9 s; and with its hand raised on the
 * spool's bell (bell.ts), so that appenders leave it the lock. LockTimeoutError past LOCK_WAIT_MS.
 * A commit refused because the lock was lost meanwhile (LockLostError) is run again, from the
 * start, under a fresh lock.
 */
export async function withInboxLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  let deadline = Date.now() + LOCK_WAIT_MS
  let raised = false
  for (let attempt = 0; ; attempt++) {
    const release = lockLooksHeld(file) ? undefined : await tryLock(file)
    if (release) {
      try {
        return await fn()
      } catch (err) {
        if (!(err instanceof LockLostError)) throw err
      } finally {
        await releaseLock(file, release, raised)
      }
      deadline = Date.now() + LOCK_WAIT_MS // lost while stopped: again under a fresh lock
      continue
    }
    if (Date.now() > deadline) throw new LockTimeoutError(file)
    raiseHand(file) // again at each attempt: a raised hand counts for a short while only
    raised = true
    await waitForTurn(file, undefined, WATCH_INTERVALS.lockRelease, backoffMs(attempt))
  }
}

/** Releases the inbox lock, then rings the bell for the writers still waiting (lowering our hand if raised). */
export async function releaseLock(inboxFile: string, release: () => Promise<void>, lowerHand = false): Promise<void> {
  await release().catch(() => {
    // Already released or compromised (reported by onCompromised); nothing left to undo.
  })
  ringBell(inboxFile, lowerHand)
}

/**
 * Waits for a chance at the inbox lock, looking first: resolves 'emptied' once `slot` (if given)
 * has been merged, 'turn' when the lock looks free, 'timeout' after `ms`. A writer (`slot` given)
 * is woken by the spool's bell (bell.ts), which a holder rings when it emptied slots and when it
 * released the lock; it leaves a free lock to a raised hand. Without a slot (markRead and the
 * like), a watch on the lock directory wakes the waiter at the release. The caller then acts and
 * looks again; a missed or spurious event costs a loop, nothing more, and the timer covers a
 * holder that died (the lock goes stale after LOCK_STALE_MS) or a foreign one (Claude Code rings
 * no bell). When no watch can be set up (e.g. out of inotify watches), `fallbackMs` is used
 * instead of `ms`: polling, never a long sleep.
 */
export function waitForTurn(inboxFile: string, slot: Slot | undefined, ms: number, fallbackMs = ms): Promise<'emptied' | 'turn' | 'timeout'> {
  return new Promise((resolve) => {
    let watcher: PathWatch | undefined
    let cancelSlot: (() => void) | undefined
    let timer: NodeJS.Timeout | undefined
    let finished = false
    const done = (news: 'emptied' | 'turn' | 'timeout') => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      watcher?.close()
      cancelSlot?.()
      resolve(news)
    }
    const look = () => {
      if (slot?.emptied()) done('emptied')
      else if (!lockLooksHeld(inboxFile) && !slot?.handRaised()) done('turn')
    }
    let armed = true
    if (slot) {
      cancelSlot = slot.onBell(look)
      armed = slot.watched
    } else {
      // A watch that breaks is closed and leaves the timer to decide, never a busy loop.
      watcher = watchPath(`${inboxFile}.lock`, () => done('turn'))
      if ((watcher.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return done('turn') // released already
      armed = watcher.armed
    }
    timer = setTimeout(() => done('timeout'), armed ? ms : fallbackMs)
    // Emptied or released before the watch was set up: no event will come.
    look()
  })
}
