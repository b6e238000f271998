import { inboxPath } from '../home/paths.js'
import { CorruptFileError, errorMessage } from '../errors.js'
import { onAbort } from '../util/abort.js'
import { FileWatch } from '../watch/file-watch.js'
import { type IdlePoll, idlePoll } from '../watch/idle-poll.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { messageKey } from './entry.js'
import { flushSpool, markDelivered } from './inbox.js'
import { InboxTail } from './inbox-tail.js'
import { oldestSpoolAge } from './spool.js'
import type { InboxMessage } from './types.js'

/** A file that fails to parse is read again after this long before it is reported (torn in-place write). */
const CORRUPT_RETRY_MS = 50
/** Spooled entries this old were left by a writer that died before merging them (see spool.ts). */
const ORPHAN_SPOOL_MS = 2_000

export interface WatchInboxOptions {
  env?: NodeJS.ProcessEnv
  /** Safety-poll interval, fixed; default WATCH_INTERVALS.inbox after an event, slowing to WATCH_INTERVALS.inboxIdle while none comes. */
  pollMs?: number
  signal?: AbortSignal
  /** Deliver read entries too (an observer such as `swarm inbox --follow`); default false. */
  includeRead?: boolean
  /** Keys (messageKey) already handled by the caller, never delivered by this watcher. */
  skip?: Iterable<string>
  /**
   * After onMessages resolves, record the batch as delivered (markDelivered), WATCH_INTERVALS
   * .deliveredMark later, leaving out what was marked read meanwhile. Only the recipient process
   * itself should set this; an observer must not. Default false.
   */
  markDelivered?: boolean
  /** Errors of the callback, of the file (corrupt) or of the watch; default: a warning on stderr. */
  onError?: (err: unknown) => void
}

/** A running inbox watcher. */
export interface InboxWatcher {
  /** Stops watching; no onMessages call starts after it is called. */
  close(): Promise<void>
  /** Resolves once the watch is armed and the messages already in the inbox were handed over. */
  ready: Promise<void>
  /** Reads the inbox now; resolves after a read that started after this call has been handled. */
  rescan(): Promise<void>
}

/**
 * Calls onMessages with every unread message of `<team>/<name>`'s inbox exactly once (dedup by
 * messageKey: msg_id, or a content hash when absent), in file order, one batch at a time.
 * Event-driven through a watch on the inbox file itself (watch/file-watch.ts: its inode, moved on
 * at each rename over it; its directory only until it exists), so a write to another member's
 * inbox wakes nobody here; with a slow safety poll; every event triggers a re-read after the
 * one in progress, so the trailing write of a burst is never missed. The poll also merges spooled
 * entries a dead writer left behind (spool.ts). onMessages is awaited before the next batch: it
 * should enqueue, not process. `ready` resolves after the unread messages already in the inbox
 * were handed over, so a caller needs no separate readInbox at start.
 */
export function watchInbox(
  team: string,
  name: string,
  onMessages: (unread: InboxMessage[]) => void | Promise<void>,
  opts: WatchInboxOptions = {},
): InboxWatcher {
  return new Watcher(inboxPath(team, name, opts.env), onMessages, opts)
}

class Watcher implements InboxWatcher {
  readonly ready: Promise<void>
  private readonly seen: Set<string>
  private readonly tail: InboxTail
  private readonly fileWatch: FileWatch
  private readonly poll: IdlePoll
  private running: Promise<void> | undefined
  private pending = false
  private closed = false
  private corruptStreak = 0
  private flushing = false
  private retryTimer: NodeJS.Timeout | undefined
  /** Keys handed over and not yet marked delivered (nor seen read since). */
  private readonly undelivered = new Set<string>()
  private deliveredTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly file: string,
    private readonly onMessages: (unread: InboxMessage[]) => void | Promise<void>,
    private readonly opts: WatchInboxOptions,
  ) {
    this.seen = new Set(opts.skip)
    this.tail = new InboxTail(file)
    this.fileWatch = new FileWatch(
      file,
      () => {
        this.poll.wake()
        void this.rescan()
      },
      (err) => this.report(err),
    )
    this.poll = idlePoll(() => void this.sweep(), {
      minMs: opts.pollMs ?? WATCH_INTERVALS.inbox,
      maxMs: opts.pollMs ?? WATCH_INTERVALS.inboxIdle,
    })
    onAbort(opts.signal, () => void this.close())
    this.ready = this.fileWatch.check().then(() => this.rescan())
  }

  rescan(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.pending = true
    this.running ??= this.loop()
    return this.running
  }

  async close(): Promise<void> {
    this.closed = true
    this.poll.close()
    clearTimeout(this.retryTimer)
    this.fileWatch.close()
    await this.markDeliveredNow()
  }

  /** The safety poll: re-arm a lost watch, merge orphaned spool entries, read again. */
  private async sweep(): Promise<void> {
    void this.fileWatch.check()
    if ((oldestSpoolAge(this.file) ?? 0) > ORPHAN_SPOOL_MS && !this.flushing) {
      this.flushing = true
      await flushSpool(this.file)
        .catch((err: unknown) => this.report(err))
        .finally(() => (this.flushing = false))
    }
    await this.rescan()
  }

  // `running` is cleared in the same synchronous step that sees `pending` false, so a rescan()
  // arriving at any moment either joins a loop that will read again or starts a new one.
  private async loop(): Promise<void> {
    try {
      while (this.pending && !this.closed) {
        this.pending = false
        await this.scanOnce()
      }
    } finally {
      this.running = undefined
    }
  }

  private async scanOnce(): Promise<void> {
    let entries: InboxMessage[]
    let from: number
    try {
      ;({ entries, from } = this.tail.read())
    } catch (err) {
      this.onReadError(err)
      return
    }
    this.corruptStreak = 0
    const fresh: InboxMessage[] = []
    const present = from === 0 ? new Set<string>() : undefined
    // Entries before `from` are unchanged since the last read, handled then.
    for (let i = from; i < entries.length; i++) {
      const m = entries[i]
      const key = messageKey(m)
      present?.add(key)
      if (m.read === true) this.undelivered.delete(key) // read first: its delivery needs no mark
      if (this.seen.has(key) || (m.read === true && !this.opts.includeRead)) continue
      this.seen.add(key)
      fresh.push(m)
    }
    // Forget what left the file (archived, consumed): it never comes back, and the set stays small.
    // An empty read is skipped above only for a missing/empty file, which forgets nothing useful;
    // a read that only found entries appended forgets nothing either.
    if (present && entries.length > 0) for (const key of this.seen) if (!present.has(key)) this.seen.delete(key)
    if (fresh.length === 0 || this.closed) return
    try {
      await this.onMessages(fresh)
    } catch (err) {
      this.report(err)
    }
    if (this.opts.markDelivered) {
      for (const m of fresh) this.undelivered.add(messageKey(m))
      this.deliveredTimer ??= setTimeout(() => void this.markDeliveredNow(), WATCH_INTERVALS.deliveredMark).unref()
    }
  }

  /**
   * Marks what was handed over and is still unread as delivered: one locked rewrite of the inbox,
   * left out when the recipient read everything first (marking read rewrites the whole inbox, so
   * the scan that follows it sees every entry's `read`).
   */
  private async markDeliveredNow(): Promise<void> {
    clearTimeout(this.deliveredTimer)
    this.deliveredTimer = undefined
    if (this.undelivered.size === 0) return
    const keys = [...this.undelivered]
    this.undelivered.clear()
    await markDelivered(this.file, keys).catch((err: unknown) => this.report(err))
  }

  private onReadError(err: unknown): void {
    // A writer that rewrites in place (Claude Code 2.1.88) can be caught mid-write; its own
    // event triggers another read, and one retry covers a missed event. Report what persists.
    if (err instanceof CorruptFileError && ++this.corruptStreak === 1) {
      clearTimeout(this.retryTimer)
      this.retryTimer = setTimeout(() => void this.rescan(), CORRUPT_RETRY_MS)
      return
    }
    if (err instanceof CorruptFileError && this.corruptStreak > 2) return // reported once already
    this.report(err)
  }

  private report(err: unknown): void {
    if (this.opts.onError) this.opts.onError(err)
    else process.stderr.write(`swarm: warning: inbox watcher for ${this.file}: ${errorMessage(err)}\n`)
  }
}
