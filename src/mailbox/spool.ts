import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { CorruptFileError } from '../errors.js'
import { moveAside, NOFOLLOW } from '../util/fs.js'
import { pidExists } from '../process/liveness.js'
import { InboxMessage } from './types.js'

/*
 * The append spool: group commit across processes.
 *
 * With one lock acquisition per message, 8 writer processes on one inbox top out well below
 * 1,500 messages/s here: proper-lockfile waiters poll mkdir with sleeps, so the lock sits idle
 * between holders and the polling itself eats the CPU. Instead a writer first puts its entries in
 * its slot in `<inbox>.spool/` (slot.ts), then either takes the lock and merges EVERY waiting slot
 * into the inbox in one atomic write, or sees its slot emptied because the current holder merged
 * it. A message is in the inbox (sent) before appendMessage resolves, exactly as with a plain
 * locked append; Claude Code, which knows nothing of the spool, still excludes us through the same
 * lock. A writer that dies between spooling and merging leaves its entries for the next merge
 * (the next append, or a watcher's safety poll): sent late, never lost.
 *
 * Two kinds of spool file are merged: slots (`*.slot`, `{ key, entries }`, emptied by truncation
 * once merged) and one-shot files (`<ms>-<pid>-<seq>-<rand>.json`, an array of entries, removed
 * once merged) as earlier versions of swarm write them.
 */

export const SLOT_SUFFIX = '.slot'
const SlotContent = z.object({ key: z.string(), entries: z.array(InboxMessage) })
const OneShotContent = z.array(InboxMessage)
/** A spool file that still does not parse this long after it was written is torn, not in progress. */
const TORN_SPOOL_MS = 10_000
/**
 * An empty slot untouched this long is nobody's: its writer closes it after 2 s idle, so it was left
 * by a writer killed or stopped by a signal (the pid is not asked: it may have been reused).
 */
const ABANDONED_SLOT_MS = 60_000
/** A merger's temp inbox this old was left by a merger killed before its rename. */
const STALE_TMP_MS = 60_000

/** `<inboxes>/<agent>.json.spool` */
export function spoolDir(inboxFile: string): string {
  return `${inboxFile}.spool`
}

/** A merged spool file, emptied (slot) or removed (one-shot) once the inbox holding it is renamed into place. */
export interface SpoolSource {
  file: string
  slot: boolean
  /** The batch key read from it: a slot is emptied only while it still holds this batch. */
  key: string
}

export interface Spooled {
  /** Every waiting entry, in spool order (by the time each batch was spooled). */
  entries: InboxMessage[]
  sources: SpoolSource[]
  /** How many slots of live processes the spool holds, waiting or not: the writers active lately. */
  slots: number
}

/**
 * Under the inbox lock: every spooled entry, in spool order. A file that does not parse is left
 * for a later merge while it may still be being written, then moved aside (bytes kept) and
 * reported through onCorrupt. Empty slots of writers long gone are removed on the way.
 */
export async function readSpool(inboxFile: string, onCorrupt: (err: CorruptFileError) => void): Promise<Spooled> {
  const dir = spoolDir(inboxFile)
  const batches: Array<{ key: string; entries: InboxMessage[]; source: SpoolSource }> = []
  let slots = 0
  const names = listSpool(dir, true)
  for (const name of names.filter((n) => n.endsWith('.tmp'))) removeIfStaleTemp(path.join(dir, name))
  for (const name of names.filter((n) => !n.endsWith('.tmp'))) {
    const file = path.join(dir, name)
    const slot = name.endsWith(SLOT_SUFFIX)
    if (slot && ownerAlive(name)) slots++
    const text = readIfExists(file)
    if (text === undefined) continue // withdrawn by its writer
    if (text === '') {
      if (slot) removeIfAbandoned(file)
      else if (spooledAt(name) < Date.now() - TORN_SPOOL_MS) removeQuietly(file) // killed between create and write
      continue
    }
    const parsed = slot ? parseSlot(text) : parseOneShot(text, name)
    if (parsed) {
      batches.push({ ...parsed, source: { file, slot, key: parsed.key } })
    } else if (writtenAt(file, name) < Date.now() - TORN_SPOOL_MS) {
      // Its writer died mid-write long ago: keep the bytes, out of the way.
      const movedTo = await moveAside(file)
      onCorrupt(new CorruptFileError(file, 'not a list of inbox entries', { movedTo }))
    }
    // else: still being written; the next merge takes it.
  }
  batches.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return { entries: batches.flatMap((b) => b.entries), sources: batches.map((b) => b.source), slots }
}

/**
 * After the inbox holding their entries was renamed into place: empties merged slots, removes
 * one-shot files. A slot is emptied only while it still holds the batch that was merged: a merger
 * that stalled past the lock's stale time (another writer took the lock, merged that batch, and
 * the slot was refilled) must not empty the next batch, which its writer would take as sent.
 */
export function clearSpooled(sources: SpoolSource[]): void {
  for (const { file, slot, key } of sources) {
    try {
      if (slot) truncateIfHolds(file, key)
      else fs.unlinkSync(file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
}

/** Reads the slot's key (its content starts `{"key":"…"`) and truncates through the same descriptor. */
function truncateIfHolds(file: string, key: string): void {
  const fd = fs.openSync(file, NOFOLLOW.readWrite) // ELOOP for a symbolic link: never truncated through
  try {
    const head = Buffer.alloc(64)
    const n = fs.readSync(fd, head, 0, head.length, 0)
    if (
      head
        .subarray(0, n)
        .toString('utf8')
        .startsWith(`{"key":${JSON.stringify(key)}`)
    )
      fs.ftruncateSync(fd, 0)
  } finally {
    fs.closeSync(fd)
  }
}

/** True when the spool holds entries (or a torn file waiting to be moved aside). */
export function spoolPending(inboxFile: string): boolean {
  return spoolState(inboxFile).waiting > 0
}

/** Age in ms of the oldest waiting spool file, or undefined when nothing waits. */
export function oldestSpoolAge(inboxFile: string): number | undefined {
  const oldest = spoolState(inboxFile).oldest
  return oldest === undefined ? undefined : Date.now() - oldest
}

/**
 * What the spool holds: how many files wait to be merged, how many slots there are (one per
 * writer active in the last seconds, waiting or not), and when the oldest waiting file was written.
 */
export function spoolState(inboxFile: string): { waiting: number; slots: number; oldest?: number } {
  const dir = spoolDir(inboxFile)
  let waiting = 0
  let slots = 0
  let oldest: number | undefined
  for (const name of listSpool(dir)) {
    let at: number
    if (name.endsWith(SLOT_SUFFIX)) {
      slots++
      const stat = statIfExists(path.join(dir, name))
      if (!stat || stat.size === 0) continue
      at = stat.mtimeMs
    } else {
      at = spooledAt(name)
    }
    waiting++
    oldest = oldest === undefined ? at : Math.min(oldest, at)
  }
  return { waiting, slots, oldest }
}

/** Spool file names (and temp inboxes with `temps`); a moved-aside `<name>.corrupt-<ts>` stays where it is, ignored. */
function listSpool(dir: string, temps = false): string[] {
  try {
    return fs.readdirSync(dir).filter((name) => name.endsWith(SLOT_SUFFIX) || name.endsWith('.json') || (temps && name.endsWith('.tmp')))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [] // nothing spooled yet
    throw err
  }
}

function parseSlot(text: string): { key: string; entries: InboxMessage[] } | undefined {
  try {
    const parsed = SlotContent.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined // not JSON (yet): the caller decides by age
  }
}

function parseOneShot(text: string, name: string): { key: string; entries: InboxMessage[] } | undefined {
  try {
    const parsed = OneShotContent.safeParse(JSON.parse(text))
    return parsed.success ? { key: name, entries: parsed.data } : undefined
  } catch {
    return undefined // not JSON (yet): the caller decides by age
  }
}

/**
 * An empty slot is normally its writer's, kept between appends and removed by it when idle. One
 * that nobody touched for ABANDONED_SLOT_MS was left behind (every merge reads every slot, so they
 * must not pile up).
 */
function removeIfAbandoned(file: string): void {
  const stat = statIfExists(file)
  if (stat && stat.size === 0 && stat.mtimeMs < Date.now() - ABANDONED_SLOT_MS) removeQuietly(file)
}

/** A temp inbox (`.<inbox>.<pid>….tmp`) this old was left by a merger killed before its rename. */
function removeIfStaleTemp(file: string): void {
  const stat = statIfExists(file)
  if (stat && stat.mtimeMs < Date.now() - STALE_TMP_MS) removeQuietly(file)
}

/**
 * False when the process that named this slot (`<pid>-…`) is gone: a killed writer's slot. True
 * when it runs, or cannot be told (a process of another user).
 */
export function ownerAlive(slotName: string): boolean {
  return pidExists(Number(slotName.split('-')[0]))
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

function statIfExists(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

function removeQuietly(file: string): void {
  try {
    fs.unlinkSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

/** When a spool file was written: a slot's mtime, a one-shot file's name. */
function writtenAt(file: string, name: string): number {
  if (!name.endsWith(SLOT_SUFFIX)) return spooledAt(name)
  return statIfExists(file)?.mtimeMs ?? Date.now()
}

/** Wall-clock ms a one-shot spool file was created, from its name (0, i.e. long ago, for a foreign name). */
function spooledAt(name: string): number {
  const ms = Number(name.split('-')[0])
  return Number.isFinite(ms) ? ms : 0
}
