import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { z } from 'zod'
import { CorruptFileError } from '../errors.js'
import { DIR_MODE, FILE_MODE, moveAside } from '../util/fs.js'
import { LOCK_STALE_MS } from '../util/lock.js'
import { InboxMessage } from './types.js'

/*
 * The append spool: group commit across processes.
 *
 * With one lock acquisition per message, 8 writer processes on one inbox top out well below
 * 1,500 messages/s here: proper-lockfile waiters poll mkdir with sleeps, so the lock sits idle
 * between holders and the polling itself eats the CPU. Instead a writer first drops its entries
 * as one new file in `<inbox>.spool/`, then either takes the lock and merges EVERY spooled file
 * into the inbox in one atomic write, or sees its file vanish because the current holder merged
 * it. A message is in the inbox (sent) before appendMessage resolves, exactly as with a plain
 * locked append; Claude Code, which knows nothing of the spool, still excludes us through the same
 * lock. A writer that dies between spooling and merging leaves its entries for the next merge
 * (the next append, or a watcher's safety poll): sent late, never lost.
 */

const SpoolFile = z.array(InboxMessage)
/** A spool file that still does not parse this long after it was named is torn, not in progress. */
const TORN_SPOOL_MS = 10_000
let sequence = 0

/** `<inboxes>/<agent>.json.spool` */
export function spoolDir(inboxFile: string): string {
  return `${inboxFile}.spool`
}

/**
 * Writes entries as one new spool file (0600) and returns its path. Names sort in spool order:
 * wall-clock ms, then pid and a per-process sequence number. Written in place under a fresh name
 * ('wx'), not through temp + rename: a merger that finds it half-written cannot parse it (a prefix
 * of a JSON array never parses) and leaves it for the next merge; that saves a rename per message.
 */
export function writeSpool(inboxFile: string, entries: InboxMessage[]): string {
  const dir = spoolDir(inboxFile)
  const name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${String(sequence++).padStart(9, '0')}-${randomBytes(3).toString('hex')}.json`
  const file = path.join(dir, name)
  const data = JSON.stringify(entries)
  try {
    fs.writeFileSync(file, data, { flag: 'wx', mode: FILE_MODE })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE })
    fs.writeFileSync(file, data, { flag: 'wx', mode: FILE_MODE })
  }
  return file
}

export interface Spooled {
  entries: InboxMessage[]
  /** Spool files to remove once the inbox holding their entries has been renamed into place. */
  files: string[]
}

/**
 * Under the inbox lock: every spooled entry, in spool order. A spool file that does not parse is
 * left for a later merge while it may still be being written, then moved aside (bytes kept) and
 * reported through onCorrupt.
 */
export async function readSpool(inboxFile: string, onCorrupt: (err: CorruptFileError) => void): Promise<Spooled> {
  const dir = spoolDir(inboxFile)
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], files: [] }
    throw err
  }
  const out: Spooled = { entries: [], files: [] }
  // Only spool names: a moved-aside `<name>.corrupt-<ts>` stays where it is, ignored.
  for (const name of names.filter(isSpoolName).sort()) {
    const file = path.join(dir, name)
    let text: string
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue // withdrawn by its writer
      throw err
    }
    const parsed = parseSpool(text)
    if (parsed) {
      out.entries.push(...parsed)
      out.files.push(file)
    } else if (spooledAt(name) < Date.now() - TORN_SPOOL_MS) {
      // Its writer died mid-write long ago: keep the bytes, out of the way (none: just remove it).
      if (text === '') {
        fs.rmSync(file, { force: true })
        continue
      }
      const movedTo = await moveAside(file)
      onCorrupt(new CorruptFileError(file, 'not a list of inbox entries', { movedTo }))
    }
    // else: still being written; the next merge takes it.
  }
  return out
}

export function removeSpooled(files: string[]): void {
  for (const file of files) {
    try {
      fs.unlinkSync(file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
}

/** True when the spool holds a file (entries waiting, or a torn file waiting to be moved aside). */
export function spoolPending(inboxFile: string): boolean {
  try {
    return fs.readdirSync(spoolDir(inboxFile)).some(isSpoolName)
  } catch {
    return false // no spool directory: nothing waits
  }
}

/** Age in ms of the oldest spooled file (from its name), or undefined when the spool is empty. */
export function oldestSpoolAge(inboxFile: string): number | undefined {
  let names: string[]
  try {
    names = fs.readdirSync(spoolDir(inboxFile)).filter(isSpoolName)
  } catch {
    return undefined // no spool directory: nothing waits
  }
  if (names.length === 0) return undefined
  return Date.now() - spooledAt(names.sort()[0])
}

/**
 * True when the inbox lock directory exists and is fresh: a failed proper-lockfile attempt costs
 * a mkdir, a stat and an Error, this one stat. Advisory only; tryLock decides.
 */
export function lockLooksHeld(inboxFile: string): boolean {
  try {
    return Date.now() - fs.statSync(`${inboxFile}.lock`).mtimeMs < LOCK_STALE_MS
  } catch {
    return false // no lock directory: free
  }
}

/**
 * One attempt at the inbox lock, with the options of util/lock.ts (same lock directory, stale
 * recovery, no crash on compromise); undefined when someone else holds it.
 */
export async function tryLock(inboxFile: string): Promise<(() => Promise<void>) | undefined> {
  try {
    return await lockfile.lock(inboxFile, {
      lockfilePath: `${inboxFile}.lock`,
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: 0,
      onCompromised: (err) => {
        process.stderr.write(`swarm: warning: lock on ${inboxFile} was compromised: ${err.message}\n`)
      },
    })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return undefined
    throw err
  }
}

/**
 * Waits for a chance at the inbox lock: resolves when the lock directory goes away (released), when
 * `spoolFile` (if given) is removed (merged by the holder), or after `ms`, whichever is first. The
 * caller then looks again; any event wakes it, so a missed or spurious one costs a loop, nothing
 * more. The watches are on the two paths themselves, not their directories: with 8 writers
 * spooling into one directory, a directory watch woke every waiter for every other writer's file.
 * When a watch cannot be set up (e.g. out of inotify watches), only the timer is left; `fallbackMs`
 * is used then instead of `ms`, so a broken watch means polling, never a long sleep.
 */
export function waitForTurn(inboxFile: string, spoolFile: string | undefined, ms: number, fallbackMs = ms): Promise<void> {
  return new Promise((resolve) => {
    const watchers: fs.FSWatcher[] = []
    let finished = false
    let timer: NodeJS.Timeout | undefined
    const done = () => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      for (const w of watchers) w.close()
      resolve()
    }
    let armed = true
    const watch = (target: string): boolean => {
      try {
        const watcher = fs.watch(target, done)
        // A broken watch leaves the timer to decide, never a busy loop.
        watcher.on('error', () => watcher.close())
        watchers.push(watcher)
        return true
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false // gone already: our turn
        armed = false
        return true
      }
    }
    if ((spoolFile !== undefined && !watch(spoolFile)) || !watch(`${inboxFile}.lock`)) return done()
    timer = setTimeout(done, armed ? ms : fallbackMs)
    // Removed between the caller's check and the watch: no event will come.
    if ((spoolFile !== undefined && !fs.existsSync(spoolFile)) || !lockLooksHeld(inboxFile)) done()
  })
}

function parseSpool(text: string): InboxMessage[] | undefined {
  try {
    const parsed = SpoolFile.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined // not JSON: reported by the caller
  }
}

function isSpoolName(name: string): boolean {
  return name.endsWith('.json')
}

/** Wall-clock ms a spool file was created, from its name (0, i.e. long ago, for a foreign name). */
function spooledAt(name: string): number {
  const ms = Number(name.split('-')[0])
  return Number.isFinite(ms) ? ms : 0
}
