import fs from 'node:fs'
import path from 'node:path'
import { CorruptFileError } from '../errors.js'
import { NOFOLLOW, openError } from '../util/fs.js'
import { spoolDir } from './spool.js'

/*
 * The spool's bell, `<spool>/bell`: a small file that every waiting writer of the inbox watches
 * (slot.ts). A holder rings it (sets its times) after a merge emptied slots and after it released
 * the lock, which wakes all the waiting writers at once. A watch per slot, emptied one by one,
 * woke them one by one, and each woken writer preempted the holder before it emptied the next
 * slot; a watch on the lock directory, set up and torn down for each wait, cost more than the
 * rest of the wait.
 *
 * A process that needs the lock for something else than an append (markRead, markDelivered, the
 * watcher's flush) raises its hand on the bell: it writes the time into it. A merging writer then
 * ends its hold, and waiting writers leave the lock to the raiser instead of racing it for the
 * lock directory, seven to one. Without that the recipient's markRead waited up to half a second
 * under load, and meanwhile the unread inbox every merge rewrites grew to 800 entries.
 */

/** How long a raised hand counts; its raiser raises it again at each failed attempt, well within. */
const HAND_MS = 250
const STAMP_BYTES = 15

/** `<spool>/bell` */
export function bellPath(inboxFile: string): string {
  return path.join(spoolDir(inboxFile), 'bell')
}

/** Wakes the writers waiting on this inbox's spool; `lowerHand` also clears a raised hand. Never through a symbolic link. */
export function ringBell(inboxFile: string, lowerHand = false): void {
  const now = new Date()
  let fd: number
  try {
    fd = fs.openSync(bellPath(inboxFile), NOFOLLOW.readWrite)
  } catch {
    return // no bell (no writer of this version is waiting), no spool, or a link: nobody to wake through it
  }
  try {
    if (lowerHand) fs.ftruncateSync(fd, 0)
    else fs.futimesSync(fd, now, now)
  } finally {
    fs.closeSync(fd)
  }
}

/** Asks merging and waiting writers to leave the lock to this process (see above). */
export function raiseHand(inboxFile: string): void {
  let fd: number
  try {
    fd = fs.openSync(bellPath(inboxFile), NOFOLLOW.readWrite)
  } catch {
    return // no bell: no writer of this version to ask
  }
  try {
    fs.writeSync(fd, String(Date.now()).padStart(STAMP_BYTES, '0'), 0)
  } finally {
    fs.closeSync(fd)
  }
}

const stamp = Buffer.alloc(STAMP_BYTES)

/**
 * True while someone's raised hand counts; `bell` is its path or an open descriptor. A symbolic
 * link in the bell's place is refused (CorruptFileError through openError), as a slot refuses it.
 */
export function handRaised(bell: string | number): boolean {
  let fd = bell
  try {
    if (typeof bell === 'string') fd = openBell(bell)
    const n = fs.readSync(fd as number, stamp, 0, STAMP_BYTES, 0)
    return n === STAMP_BYTES && Date.now() - Number(stamp.toString('latin1')) < HAND_MS
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' || err instanceof CorruptFileError) throw err
    return false // no bell: nobody asked
  } finally {
    if (typeof bell === 'string' && typeof fd === 'number') fs.closeSync(fd)
  }
}

function openBell(bell: string): number {
  try {
    return fs.openSync(bell, NOFOLLOW.read)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw openError(bell, err)
    throw err
  }
}
