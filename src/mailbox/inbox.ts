import { UsageError, type CorruptFileError } from '../errors.js'
import { OWN_FILE, parseJsonFile, pathExists, readFileIfExists } from '../util/fs.js'
import { commit, warnCorrupt } from './commit.js'
import { createEntry, messageKey, type NewMessage } from './entry.js'
import { withInboxLock } from './inbox-lock.js'
import { outboxFor } from './outbox.js'
import { InboxFile, type InboxMessage } from './types.js'

export type { NewMessage } from './entry.js'

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
 * over 1 MiB before touching the disk. The entries go through this process's spool slot
 * (outbox.ts, spool.ts): whoever holds the inbox lock merges every waiting writer's entries in one
 * atomic write (temp file + rename), archiving read entries past ARCHIVE_THRESHOLD on the way.
 * LockTimeoutError (nothing sent) when the lock stays held past LOCK_WAIT_MS.
 */
export async function appendMessages(file: string, messages: NewMessage[], options: AppendOptions = {}): Promise<InboxMessage[]> {
  const entries = messages.map(createEntry)
  if (entries.length === 0) return []
  await outboxFor(file).send(entries, options.onCorrupt ?? warnCorrupt)
  return entries
}

/** Merges what crashed writers left in the spool (called by watchers' safety poll). */
export async function flushSpool(file: string): Promise<void> {
  await withInboxLock(file, () => commit(file, { onCorrupt: warnCorrupt }))
}

/**
 * Reads an inbox; [] when it does not exist (or is empty). A file that does not parse, or a
 * symbolic link (never followed), is a CorruptFileError naming it; the reader leaves it where it is.
 */
export async function readInbox(file: string): Promise<InboxMessage[]> {
  const text = await readFileIfExists(file, OWN_FILE)
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
