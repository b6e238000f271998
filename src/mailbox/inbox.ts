import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { CorruptFileError, LockTimeoutError, UsageError } from '../errors.js'
import { FILE_MODE, moveAside, parseJsonFile, pathExists, readFileIfExists } from '../util/fs.js'
import { appendToArchive, splitForArchive } from './archive.js'
import { createEntry, messageKey, type NewMessage } from './entry.js'
import { lockLooksHeld, readSpool, removeSpooled, spoolPending, tryLock, waitForTurn, writeSpool } from './spool.js'
import { InboxFile, type InboxMessage } from './types.js'

export type { NewMessage } from './entry.js'

/** How long an append waits for the inbox lock (longer than a dead holder's stale time). */
export const APPEND_TIMEOUT_MS = 12_000

/**
 * Which messages markRead marks: all, indexes into the file as it is now, msg_ids (messageKey for
 * entries without one), or a predicate.
 */
export type ReadSelector = 'all' | number[] | { msgIds: string[] } | ((m: InboxMessage, i: number) => boolean)

export interface AppendOptions {
  /**
   * Called when the inbox did not parse: it has been moved aside (err.movedTo keeps every byte) and
   * the append went on into a fresh inbox. Default: a warning on stderr. The append does not throw
   * then, because the new message IS written and a caller that retried would send it twice.
   */
  onCorrupt?: (err: CorruptFileError) => void
}

/** Appends one message; see appendMessages. */
export async function appendMessage(file: string, message: NewMessage, options?: AppendOptions): Promise<InboxMessage> {
  const [entry] = await appendMessages(file, [message], options)
  return entry
}

/**
 * Appends messages; when it resolves they are in the inbox, in order, after everything appended
 * before. Fills in timestamp, msg_id (uuid), msgV 1 and read false where absent, and refuses a text
 * over 1 MiB before touching the disk. The entries go through the spool (spool.ts): whoever holds
 * the inbox lock merges every waiting writer's entries in one atomic write (temp file + rename),
 * archiving read entries past ARCHIVE_THRESHOLD on the way. LockTimeoutError (nothing sent) when
 * the lock stays held past APPEND_TIMEOUT_MS.
 */
export async function appendMessages(file: string, messages: NewMessage[], options: AppendOptions = {}): Promise<InboxMessage[]> {
  const entries = messages.map(createEntry)
  if (entries.length === 0) return []
  const onCorrupt = options.onCorrupt ?? warnCorrupt
  const mine = writeSpool(file, entries)
  createIfMissing(file)
  const deadline = Date.now() + APPEND_TIMEOUT_MS
  for (let attempt = 0; ; attempt++) {
    if (!fs.existsSync(mine)) return entries // merged by the writer holding the lock
    const release = lockLooksHeld(file) ? undefined : await tryLock(file)
    if (release) {
      try {
        // Group commit, continued: while writers woken by one merge spool their next message, the
        // holder keeps the lock and merges again (the inbox it just wrote is still in memory: under
        // the lock nobody else writes it), rather than releasing it to a burst of waiters racing
        // for the lock directory. A failed mkdir of the lock takes the inboxes directory's inode
        // lock like a successful one: measured here at ~2 ms each under load, slowing the holder's
        // own rename in that directory. Bounded, so that markRead/markDelivered get their turn.
        let inbox = (await commit(file, { onCorrupt })).inbox
        for (let round = 1; round < MERGE_ROUNDS && spoolPending(file); round++) {
          inbox = (await commit(file, { onCorrupt }, inbox)).inbox
        }
      } catch (err) {
        // Not written: withdraw it so that a retry cannot send it twice. (Already gone means
        // another writer merged it before our attempt failed: it is sent.)
        if (withdraw(mine)) throw err
      } finally {
        await release().catch(() => {
          // Already released or compromised (reported by onCompromised); nothing left to undo.
        })
      }
      return entries
    }
    if (Date.now() > deadline) {
      if (withdraw(mine)) throw new LockTimeoutError(file)
      return entries
    }
    await waitForTurn(file, mine, SAFETY_WAIT_MS, backoffMs(attempt))
  }
}

/** Merges what crashed writers left in the spool (called by watchers' safety poll). */
export async function flushSpool(file: string): Promise<void> {
  await withInboxLock(file, () => commit(file, { onCorrupt: warnCorrupt }))
}

/**
 * Reads an inbox; [] when it does not exist (or is empty). A file that does not parse is a
 * CorruptFileError naming it; the reader leaves it where it is.
 */
export async function readInbox(file: string): Promise<InboxMessage[]> {
  const text = await readFileIfExists(file)
  if (text === undefined || text.trim() === '') return []
  return parseJsonFile(file, text, InboxFile)
}

/**
 * Sets `read: true` on the selected unread entries; returns how many changed. 'all' and indexes
 * refer to the inbox as it is when the lock is taken (spooled appends merged in): an archive or a
 * new message in between shifts them, so prefer msgIds.
 * A corrupt inbox is moved aside and reported (CorruptFileError with movedTo); nothing is created.
 */
export async function markRead(file: string, which: ReadSelector): Promise<number> {
  const select = toPredicate(which)
  return rewrite(file, (entries) => {
    let changed = 0
    entries.forEach((m, i) => {
      if (m.read === true || !select(m, i)) return
      m.read = true
      changed++
    })
    return changed
  })
}

/**
 * Records that the recipient process took these messages into its queue (`deliveredAt` on the
 * entry, under the lock), by messageKey (= msg_id when present). Returns how many changed.
 */
export async function markDelivered(file: string, keys: Iterable<string>): Promise<number> {
  const wanted = new Set(keys)
  if (wanted.size === 0) return 0
  const at = new Date().toISOString()
  return rewrite(file, (entries) => {
    let changed = 0
    for (const m of entries) {
      if (m.deliveredAt || m.read === true || !wanted.has(messageKey(m))) continue
      m.deliveredAt = at
      changed++
    }
    return changed
  })
}

/** Runs `change` on the entries under the lock; writes them back only when something changed. */
async function rewrite(file: string, change: (entries: InboxMessage[]) => number): Promise<number> {
  if (!(await pathExists(file))) return 0
  return withInboxLock(file, async () => (await commit(file, { change })).changed)
}

/**
 * Runs `fn` holding the inbox lock (the same proper-lockfile lock as util/lock.ts's withFileLock),
 * waiting for it the way appenders do: woken when the lock directory goes away rather than by
 * randomized sleeps. With writers handing the lock to each other back to back, sleeps of up to
 * 40 ms found it free so rarely that the recipient's markRead waited up to ~0.9 s, and in the
 * meantime the unread inbox every append rewrites grew to ~1,000 entries.
 * LockTimeoutError past APPEND_TIMEOUT_MS.
 */
async function withInboxLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + APPEND_TIMEOUT_MS
  for (let attempt = 0; ; attempt++) {
    const release = lockLooksHeld(file) ? undefined : await tryLock(file)
    if (release) {
      try {
        return await fn()
      } finally {
        await release().catch(() => {
          // Already released or compromised (reported by onCompromised); nothing left to undo.
        })
      }
    }
    if (Date.now() > deadline) throw new LockTimeoutError(file)
    await waitForTurn(file, undefined, SAFETY_WAIT_MS, backoffMs(attempt))
  }
}

/**
 * The critical section (call under the lock): the inbox plus every spooled entry not already in it
 * (a writer killed between the inbox rename and the spool cleanup would otherwise repeat), then
 * `change`, then one atomic write. A corrupt inbox is moved aside; with onCorrupt the write goes on
 * into a fresh inbox, without it the CorruptFileError is thrown. `known`: the inbox as a previous
 * commit of the SAME lock hold left it (its returned `inbox`), so that it is not read again.
 * Returns how many entries `change` changed and the inbox as it now is on disk.
 */
async function commit(
  file: string,
  opts: { onCorrupt?: (err: CorruptFileError) => void; change?: (entries: InboxMessage[]) => number },
  known?: InboxMessage[],
): Promise<{ changed: number; inbox: InboxMessage[] }> {
  let current: InboxMessage[]
  try {
    current = known ?? (await loadForWrite(file))
  } catch (err) {
    if (!opts.onCorrupt || !(err instanceof CorruptFileError) || !err.movedTo) throw err
    opts.onCorrupt(err)
    current = []
  }
  const spooled = await readSpool(file, opts.onCorrupt ?? warnCorrupt)
  const present = new Set(current.map((m) => m.msg_id).filter((id) => id !== undefined))
  const entries = current.concat(spooled.entries.filter((m) => m.msg_id === undefined || !present.has(m.msg_id)))
  const changed = opts.change ? opts.change(entries) : 0
  if (spooled.files.length === 0 && changed === 0) return { changed, inbox: current }
  const inbox = await writeInbox(file, entries)
  removeSpooled(spooled.files)
  return { changed, inbox }
}

/**
 * Writes the inbox atomically, first archiving read entries past the threshold; returns what the
 * inbox now holds. Call under the lock.
 */
async function writeInbox(file: string, entries: InboxMessage[]): Promise<InboxMessage[]> {
  const { keep, archive } = splitForArchive(entries)
  await appendToArchive(file, archive)
  writeAtomicSync(file, JSON.stringify(keep, null, 2))
  return keep
}

// Inside the critical section the file is read and written with synchronous calls: each async
// fs call is a thread-pool round trip, and measured here a read-modify-write held the lock for
// 1.0–2.3 ms that way against 0.7 ms synchronously. The inbox stays small (read entries are
// archived), so the event loop is blocked for well under a millisecond.

/** Temp file in the same directory + rename, 0600: a crash never leaves a torn inbox. */
function writeAtomicSync(file: string, data: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  fs.writeFileSync(tmp, data, { mode: FILE_MODE })
  try {
    fs.renameSync(tmp, file)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw err
  }
}

/** For writers, under the lock: a corrupt inbox is moved aside, never overwritten. */
async function loadForWrite(file: string): Promise<InboxMessage[]> {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  if (text.trim() === '') return []
  try {
    return parseJsonFile(file, text, InboxFile)
  } catch (err) {
    if (!(err instanceof CorruptFileError)) throw err
    const movedTo = await moveAside(file)
    const detail = err.message.slice(`corrupt file ${file} (`.length, -1)
    throw new CorruptFileError(file, detail, { movedTo, cause: err })
  }
}

/** Removes a spool file that was not merged; false when it is already gone (merged). */
function withdraw(spoolFile: string): boolean {
  try {
    fs.unlinkSync(spoolFile)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}

/** An empty inbox first, for lockers that resolve the file's real path (Claude Code). */
function createIfMissing(file: string): void {
  if (fs.existsSync(file)) return
  try {
    fs.writeFileSync(file, '[]', { flag: 'wx', mode: FILE_MODE })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

/**
 * How long a waiter sleeps when its watches are armed: normally an event (its spool file merged,
 * the lock released) wakes it first; the timer covers a holder that died (the lock goes stale after
 * LOCK_STALE_MS) and filesystems whose events do not arrive.
 */
const SAFETY_WAIT_MS = 50

/** At most this many merges per lock hold of an appender (see appendMessages). */
const MERGE_ROUNDS = 4

/**
 * The timer of a waiter whose watches could not be set up: randomized, growing 1–10 ms (×1–2).
 * Short, because then nothing else tells it that its spool file was merged or the lock released.
 */
function backoffMs(attempt: number): number {
  return Math.min(1.5 ** attempt, 10) * (1 + Math.random())
}

function warnCorrupt(err: CorruptFileError): void {
  process.stderr.write(`swarm: warning: ${err.message}; the new message went into a fresh inbox\n`)
}

function toPredicate(which: ReadSelector): (m: InboxMessage, i: number) => boolean {
  if (which === 'all') return () => true
  if (typeof which === 'function') return which
  if (Array.isArray(which)) {
    for (const i of which) {
      if (!Number.isInteger(i) || i < 0) throw new UsageError(`invalid inbox index ${i}: use integers from 0`)
    }
    const set = new Set(which)
    return (_m, i) => set.has(i)
  }
  if (which && Array.isArray(which.msgIds)) {
    const ids = new Set(which.msgIds)
    return (m) => ids.has(messageKey(m))
  }
  throw new UsageError('markRead: select "all", indexes, { msgIds } or a predicate')
}
