import fs from 'node:fs'
import path from 'node:path'
import { DIR_MODE } from '../util/fs.js'
import { LockTimeoutError, NotFoundError, type CorruptFileError } from '../errors.js'
import { bellPath, handRaised } from './bell.js'
import { commit, createIfMissing, inboxHolds, type Committed } from './commit.js'
import { Gatherer } from './gather.js'
import { backoffMs, LOCK_WAIT_MS, lockLooksHeld, releaseLock, tryLock, waitForTurn } from './inbox-lock.js'
import { LockLostError } from '../util/lock-fence.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { Slot } from './slot.js'
import { spoolPending } from './spool.js'
import type { InboxMessage } from './types.js'

/*
 * This process's appends to one inbox. Entries go through the process's spool slot (slot.ts): one
 * batch in flight at a time, the appends that arrive meanwhile go together as the next batch, in
 * call order. A batch is sent when its slot has been emptied by whoever holds the inbox lock.
 *
 * The writer that takes the lock merges every waiting slot, its own included, and then KEEPS the
 * lock while more slots fill (the writers it just released spool their next message within a
 * millisecond or so), for up to MAX_HOLD_MS: its own append resolves after the first merge, the
 * rest of the hold runs in the background. Handing the lock over costs far more than a merge
 * under load: the waiters all wake at the release and race for the lock directory, the winner
 * reads and validates the inbox again, the losers go back to sleep.
 *
 * When the lock looks free and nobody raised a hand, an append skips the slot: it takes the lock
 * and commits the entries it holds (with whatever else the spool holds) at once. A broadcast
 * writes N inboxes once each, nobody else waiting on most of them; the slot's file, its bell
 * watch, its truncation and its removal were half of each recipient's metadata operations
 * (issue 25, `send '*'` to 64). Under contention the lock looks held and the spool does its work.
 */

/** Longest continuous hold of a merging writer, so that markRead and Claude Code get their turn. */
const MAX_HOLD_MS = 25
/** How long a merging writer waits for more slots to fill before it merges what waits (or releases, when nothing does). */
const GATHER_MS = 3

const outboxes = new Map<string, Outbox>()

/** The outbox of `file` in this process. */
export function outboxFor(file: string): Outbox {
  const key = path.resolve(file)
  let outbox = outboxes.get(key)
  if (!outbox) {
    outbox = new Outbox(file, () => outboxes.delete(key))
    outboxes.set(key, outbox)
  }
  return outbox
}

type Reporter = (err: CorruptFileError) => void

export class Outbox {
  private slot: Slot | undefined
  private queue: Array<{ entries: InboxMessage[]; onCorrupt: Reporter; done: (err?: unknown) => void }> = []
  private busy = false
  /** True while this process holds the lock and merges in the background. */
  private holding = false

  constructor(
    private readonly file: string,
    private readonly forget: () => void,
  ) {}

  /** Resolves once the entries are in the inbox; rejects when they were not sent. */
  send(entries: InboxMessage[], onCorrupt: Reporter): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ entries, onCorrupt, done: (err) => (err === undefined ? resolve() : reject(err)) })
      if (!this.busy) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.busy = true
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0)
      const reporters = new Set(batch.map((b) => b.onCorrupt))
      let failure: unknown
      try {
        await this.deliver(
          batch.flatMap((b) => b.entries),
          (err) => {
            for (const report of reporters) report(err)
          },
        )
      } catch (err) {
        failure = err ?? new Error('append failed')
      }
      for (const b of batch) b.done(failure)
    }
    this.busy = false
    if (!this.slot) {
      if (!this.holding) this.forget() // every batch went in without a slot: nothing to keep open
      return
    }
    this.slot.idle(() => {
      this.slot = undefined
      if (!this.busy && !this.holding) this.forget()
    })
  }

  /** Spools the entries, then merges them under the lock or waits until a holder has. */
  private async deliver(entries: InboxMessage[], onCorrupt: Reporter): Promise<void> {
    if (!this.holding && (await this.appendDirect(entries, onCorrupt))) return
    // A slot still holding an earlier batch (its append failed oddly, e.g. the lock call threw) is
    // left queued as it is: a slot is only ever filled while empty.
    if (!this.slot?.usable() || !this.slot.emptied()) {
      this.slot?.close()
      this.slot = Slot.create(this.file)
      createIfMissing(this.file)
    }
    const slot = this.slot
    slot.busy()
    slot.fill(entries)
    let deadline = Date.now() + LOCK_WAIT_MS
    for (let attempt = 0; ; attempt++) {
      const release = this.holding || lockLooksHeld(this.file) || slot.handRaised() ? undefined : await tryLock(this.file)
      if (release) {
        let committed: Committed
        try {
          committed = await commit(this.file, { onCorrupt })
        } catch (err) {
          if (err instanceof LockLostError) {
            // Stopped past the stale time: the new holder may have merged our slot; if not, merge again.
            await releaseLock(this.file, release)
            if (slot.emptied()) return
            deadline = Date.now() + LOCK_WAIT_MS
            continue
          }
          // Not written: withdraw it — while we still hold the lock, so no merger can be reading it —
          // so that a retry cannot send it twice. (Already emptied: it was merged before; it is sent.)
          const withdrawn = this.withdraw()
          await releaseLock(this.file, release)
          if (withdrawn) throw err
          return
        }
        // Alone (ours is the only slot), there is nobody to merge for: release at once.
        if (committed.slots > 1) void this.keepMerging(release, committed.inbox, onCorrupt)
        else await releaseLock(this.file, release)
        if (slot.emptied()) return // merged with the others
      }
      if (Date.now() > deadline) {
        if (slot.emptied()) return
        // Without the lock the slot cannot be taken back safely (a merger may be reading it): it stays
        // queued, merged by whoever takes the lock next, and this process writes a new slot from now on.
        this.slot = undefined
        slot.close() // a filled slot file stays
        throw new LockTimeoutError(this.file, { hint: 'the message is queued and goes into the inbox when the lock is free: do not send it again' })
      }
      const news = await waitForTurn(this.file, slot, WATCH_INTERVALS.spoolBell, backoffMs(attempt))
      if (news === 'emptied') return // merged by the writer holding the lock
      if (slot.gone() && !slot.emptied()) {
        // Removed under us with the message in it (the team was deleted): it is in no file.
        this.slot = undefined
        slot.close()
        throw new NotFoundError(`${this.file} was deleted (the team with it?); the message was not sent`)
      }
    }
  }

  /**
   * The lock free: the entries committed under it without a slot; true once they are in the inbox.
   * False when the lock was not to be had (or was lost before the rename, so nothing was written):
   * the caller spools them. An error of the commit is thrown only when the entries are not in the inbox.
   */
  private async appendDirect(entries: InboxMessage[], onCorrupt: Reporter): Promise<boolean> {
    if (lockLooksHeld(this.file) || handRaised(bellPath(this.file))) return false
    try {
      createIfMissing(this.file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: DIR_MODE }) // as a first slot makes its spool
      createIfMissing(this.file)
    }
    const release = await tryLock(this.file)
    if (!release) return false
    let committed: Committed
    try {
      committed = await commit(this.file, { onCorrupt, append: entries })
    } catch (err) {
      // Still under the lock: the inbox tells whether the rename happened (an error after it, e.g.
      // while emptying merged slots, leaves the entries sent).
      const sent = !(err instanceof LockLostError) && inboxHolds(this.file, entries)
      await releaseLock(this.file, release)
      if (sent) return true
      if (err instanceof LockLostError) return false
      throw err
    }
    // Other writers' slots (ours, if any, is idle and empty): stay and merge for them, as a spooling holder does.
    if (committed.slots > (this.slot ? 1 : 0)) void this.keepMerging(release, committed.inbox, onCorrupt)
    else await releaseLock(this.file, release)
    return true
  }

  /**
   * The rest of a hold: merges again as soon as every slot of the spool is filled, or whatever
   * waits after GATHER_MS; releases the lock once nothing was filled for GATHER_MS, after
   * MAX_HOLD_MS, or when a process raised its hand for a mark (bell.ts). A failed merge ends the
   * hold (a lost lock too, LockLostError); the writers whose slots it left take the lock in turn and
   * meet any error themselves.
   */
  private async keepMerging(release: () => Promise<void>, inbox: InboxMessage[], onCorrupt: Reporter): Promise<void> {
    const until = Date.now() + MAX_HOLD_MS
    const bell = bellPath(this.file)
    const gatherer = new Gatherer(this.file)
    this.holding = true
    try {
      while (Date.now() < until) {
        await gatherer.until(Math.min(GATHER_MS, until - Date.now()))
        if (handRaised(bell)) break // someone needs the lock for a mark: their commit merges what waits
        if (gatherer.filled() === 0 && !spoolPending(this.file)) break
        inbox = (await commit(this.file, { onCorrupt }, inbox)).inbox
      }
    } catch {
      // Left in the slots: their writers retry under the lock and get the error themselves.
    } finally {
      gatherer.close()
      // Cleared before the release, whose rmdir runs synchronously (inbox-lock.ts): from then on
      // this process's next append takes the lock like any other writer.
      this.holding = false
      await releaseLock(this.file, release)
    }
  }

  /** Takes back the entries in the slot; false when they were merged already (sent). */
  private withdraw(): boolean {
    if (!this.slot?.withdraw()) return false
    this.slot = undefined
    return true
  }
}
