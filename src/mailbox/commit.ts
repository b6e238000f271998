import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { CorruptFileError } from '../errors.js'
import { decodeUtf8, FILE_MODE, moveAside, NOFOLLOW, openError, parseJsonFile, withPath } from '../util/fs.js'
import { appendToArchive, splitForArchive } from './archive.js'
import { ringBell } from './bell.js'
import { holdsLock, LockLostError } from '../util/lock-fence.js'
import { clearSpooled, readSpool, spoolDir } from './spool.js'
import { InboxFile, type InboxMessage } from './types.js'

export interface CommitOptions {
  /**
   * Called when the inbox did not parse and was moved aside; the commit then goes on into a fresh
   * inbox. Without it the CorruptFileError (with movedTo) is thrown.
   */
  onCorrupt?: (err: CorruptFileError) => void
  /** Changes the entries in place before the write; returns how many it changed. */
  change?: (entries: InboxMessage[]) => number
  /** Entries appended after the spooled ones: an append that took the lock without spooling (outbox.ts). */
  append?: InboxMessage[]
}

export interface Committed {
  /** How many entries `change` changed. */
  changed: number
  /** How many slots the spool holds (spool.ts): more than one means other writers are active. */
  slots: number
  /** The inbox as it now is on disk. */
  inbox: InboxMessage[]
}

/**
 * The critical section (call under the inbox lock): the inbox plus every spooled entry not already
 * in it (a writer killed between the inbox rename and the spool cleanup would otherwise repeat),
 * then `change`, then one atomic write, then the merged spool files are emptied. `known`: the inbox
 * as a previous commit of the SAME lock hold left it (its returned `inbox`), so that it is not read
 * again. Fenced: LockLostError, nothing written, when the lock is no longer this process's just
 * before the archive append or the rename (the caller merges again under a fresh lock).
 */
export async function commit(file: string, opts: CommitOptions, known?: InboxMessage[]): Promise<Committed> {
  let current = known
  let movedAside = false
  if (!current) {
    const loaded = await loadForWrite(file)
    if (loaded.corrupt) {
      if (!opts.onCorrupt) throw loaded.corrupt
      opts.onCorrupt(loaded.corrupt)
      movedAside = true // the entries kept from it are written back even when nothing else changes
    }
    current = loaded.entries
  }
  const spooled = await readSpool(file, opts.onCorrupt ?? warnCorrupt)
  const present = new Set(current.map((m) => m.msg_id).filter((id) => id !== undefined))
  const entries = current.concat(
    spooled.entries.filter((m) => m.msg_id === undefined || !present.has(m.msg_id)),
    opts.append ?? [],
  )
  const changed = opts.change ? opts.change(entries) : 0
  const { slots } = spooled
  if (spooled.sources.length === 0 && changed === 0 && !movedAside && !opts.append?.length) return { changed, slots, inbox: current }
  const inbox = await writeInbox(file, entries, opts.change || movedAside ? undefined : current)
  clearSpooled(spooled.sources)
  if (spooled.sources.some((source) => source.slot)) ringBell(file)
  return { changed, slots, inbox }
}

/**
 * Under the inbox lock, after a commit threw: true when the inbox holds every one of `entries`
 * (the rename had happened: they are sent), false when it holds none of them or cannot be read.
 */
export function inboxHolds(file: string, entries: InboxMessage[]): boolean {
  let inbox: InboxMessage[]
  try {
    inbox = parseJsonFile(file, decodeUtf8(file, readNoFollowSync(file)), InboxFile)
  } catch {
    return false
  }
  const ids = new Set(inbox.map((m) => m.msg_id))
  return entries.every((m) => m.msg_id !== undefined && ids.has(m.msg_id))
}

/** An empty inbox first, for lockers that resolve the file's real path (Claude Code). */
export function createIfMissing(file: string): void {
  if (fs.existsSync(file)) return
  try {
    fs.writeFileSync(file, '[]', { flag: 'wx', mode: FILE_MODE })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

export function warnCorrupt(err: CorruptFileError): void {
  process.stderr.write(`swarm: warning: ${err.message}; the new message went into a fresh inbox\n`)
}

/**
 * Writes the inbox atomically, first archiving read entries past the threshold; returns what the
 * inbox now holds. Call under the lock. `appendedTo`: the entries `entries` only adds to, unchanged.
 */
async function writeInbox(file: string, entries: InboxMessage[], appendedTo?: InboxMessage[]): Promise<InboxMessage[]> {
  const { keep, archive } = splitForArchive(entries)
  fence(file)
  await appendToArchive(file, archive)
  const text = (archive.length === 0 && appendedTo && extend(file, appendedTo, keep)) || JSON.stringify(keep, null, 2)
  writeAtomicSync(file, text)
  lastWrite = { file, inbox: keep, text }
  return keep
}

/**
 * The last inbox this process wrote, and its text. A writer merging round after round under one
 * hold appends to the inbox it wrote itself: serializing only the new entries saves a fifth of a
 * merge, on the path every waiting writer waits on.
 */
let lastWrite: { file: string; inbox: InboxMessage[]; text: string } | undefined

/** The text of `entries` (`previous` plus more), from the text written for `previous` if that is known. */
function extend(file: string, previous: InboxMessage[], entries: InboxMessage[]): string | undefined {
  if (lastWrite?.file !== file || lastWrite.inbox !== previous) return undefined
  if (previous.length === 0 || entries.length === previous.length) return undefined
  // JSON.stringify(list, null, 2) is `[\n`, the items joined by `,\n`, then `\n]`.
  const added = JSON.stringify(entries.slice(previous.length), null, 2)
  return `${lastWrite.text.slice(0, -2)},\n${added.slice(2)}`
}

// Inside the critical section the file is read and written with synchronous calls: each async
// fs call is a thread-pool round trip, and measured here a read-modify-write held the lock for
// 1.0–2.3 ms that way against 0.7 ms synchronously. The inbox stays small (read entries are
// archived), so the event loop is blocked for well under a millisecond.

/** This process's part of temp names, made at the first write (no work at import: `swarm status` loads this module and writes nothing). */
let tmpToken: string | undefined
let tmpSequence = 0
function processToken(): string {
  tmpToken ??= randomBytes(4).toString('hex')
  return tmpToken
}

/**
 * Temp file + rename, 0600: a crash never leaves a torn inbox. The temp file goes in the spool
 * directory (same filesystem) when there is one: the inboxes directory is what every inbox watcher
 * of the team watches, and creating, writing and moving a temp file there woke each of them three
 * more times per write.
 */
function writeAtomicSync(file: string, data: string): void {
  const name = `.${path.basename(file)}.${process.pid}.${processToken()}.${tmpSequence++}.tmp`
  let tmp = path.join(spoolDir(file), name)
  try {
    try {
      fs.writeFileSync(tmp, data, { flag: 'wx', mode: FILE_MODE })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      tmp = path.join(path.dirname(file), name) // no spool (nobody appended through swarm yet)
      fs.writeFileSync(tmp, data, { flag: 'wx', mode: FILE_MODE })
    }
    fence(file) // synchronous from here to the rename: nothing of this process runs in between
    fs.renameSync(tmp, file)
  } catch (err) {
    fs.rmSync(tmp, { force: true }) // a write that failed half-way (disk full) leaves no temp file
    throw withPath(err, file, tmp)
  }
}

/** Throws LockLostError when the inbox lock is not (or no longer) this process's. */
function fence(file: string): void {
  if (!holdsLock(`${file}.lock`)) throw new LockLostError(`${file}.lock`)
}

/**
 * For writers, under the lock: a corrupt inbox is moved aside (every byte kept), never overwritten
 * (a symbolic link is neither followed nor moved: CorruptFileError, exit 5);
 * `corrupt` then says where it went. Bytes that are not UTF-8 are never rewritten as U+FFFD: the
 * file is moved aside and only the entries that decode cleanly go on in the inbox.
 */
async function loadForWrite(file: string): Promise<{ entries: InboxMessage[]; corrupt?: CorruptFileError }> {
  let bytes: Buffer
  try {
    bytes = readNoFollowSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [] }
    throw openError(file, err) // EISDIR names no path; a symbolic link is refused, left as it is
  }
  let text: string
  try {
    text = decodeUtf8(file, bytes)
  } catch {
    const entries = cleanEntries(bytes)
    const movedTo = await moveAside(file)
    const detail = `not valid UTF-8; the entries holding those bytes were set aside, ${entries.length} kept`
    return { entries, corrupt: new CorruptFileError(file, detail, { movedTo }) }
  }
  if (text.trim() === '') return { entries: [] }
  try {
    return { entries: parseJsonFile(file, text, InboxFile) }
  } catch (err) {
    if (!(err instanceof CorruptFileError)) throw err
    const movedTo = await moveAside(file)
    const detail = err.message.slice(`corrupt file ${file} (`.length, -1)
    return { entries: [], corrupt: new CorruptFileError(file, detail, { movedTo, cause: err }) }
  }
}

function readNoFollowSync(file: string): Buffer {
  const fd = fs.openSync(file, NOFOLLOW.read)
  try {
    return fs.readFileSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** The entries of an inbox that is not valid UTF-8 that hold no replacement character once decoded ([] when it does not parse). */
function cleanEntries(bytes: Buffer): InboxMessage[] {
  try {
    const parsed = InboxFile.safeParse(JSON.parse(bytes.toString('utf8')))
    return parsed.success ? parsed.data.filter((m) => !JSON.stringify(m).includes('\uFFFD')) : []
  } catch {
    return []
  }
}
