import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { onExit } from '../process/handlers.js'
import { DIR_MODE, FILE_MODE, NOFOLLOW, openError } from '../util/fs.js'
import { type PathWatch, watchPath } from '../watch/path-watch.js'
import { bellPath, handRaised } from './bell.js'
import { SLOT_SUFFIX, spoolDir } from './spool.js'
import type { InboxMessage } from './types.js'

/*
 * The writer's side of the spool (spool.ts): one slot file per process and inbox, reused from one
 * append to the next. The writer fills the empty slot; whoever holds the inbox lock merges it into
 * the inbox, empties it (the writer's receipt) and rings the spool's bell (bell.ts), which every
 * waiting writer watches. A new file per message cost an inode allocation and a free each time:
 * on ext4 without a journal (this machine's) every allocation scans past the inodes freed in the
 * last ~35 s, and with 2,000 messages a second creating the spool file became the largest single
 * cost of an append.
 */

/** This process's part of slot names, made at the first slot (no work at import). */
let token: string | undefined
let generation = 0
function processToken(): string {
  token ??= randomBytes(4).toString('hex')
  return token
}
let sequence = 0

/** How long an idle slot stays open (file, descriptor, watch) for the next append. */
const IDLE_CLOSE_MS = 2_000

const open = new Set<Slot>()
/** While a slot is open, the process's exit closes (and so removes) it. */
let disposeExitHook: (() => void) | undefined
function closeAllSlots(): void {
  for (const slot of open) slot.close()
}

/**
 * A slot: `<spool>/<pid>-<token>-<generation>.slot`, kept open (with a watch on the spool's bell)
 * for as long as the process keeps appending to that inbox. Only its own process writes it, and
 * only while it is empty; a merger only empties it, and only while it still holds the batch the
 * merger read (spool.ts clearSpooled), so a merger that stalled cannot empty a later batch.
 */
export class Slot {
  private readonly fd: number
  private readonly bellFd: number
  private readonly probe = Buffer.alloc(1)
  private readonly watch: PathWatch
  private onRing: (() => void) | undefined
  private idleTimer: NodeJS.Timeout | undefined
  private onIdle: (() => void) | undefined
  private inUse = false
  private closed = false

  private constructor(
    readonly file: string,
    bell: string,
  ) {
    this.fd = fs.openSync(file, 'wx+', FILE_MODE)
    try {
      this.bellFd = fs.openSync(bell, NOFOLLOW.readAppend, FILE_MODE) // a symbolic link there is refused
    } catch (err) {
      fs.closeSync(this.fd)
      fs.rmSync(file, { force: true })
      throw openError(bell, err)
    }
    // Unwatched (none could be set up, e.g. out of inotify watches, or it broke), waiters poll
    // instead: never a busy loop. An idle slot must not keep the process alive; a waiting append
    // has its own timer.
    this.watch = watchPath(bell, () => this.onRing?.(), { unref: true })
    open.add(this)
    disposeExitHook ??= onExit(closeAllSlots)
  }

  /** A new, empty slot for `inboxFile` (creating the spool directory when needed). */
  static create(inboxFile: string): Slot {
    const file = path.join(spoolDir(inboxFile), `${process.pid}-${processToken()}-${generation++}${SLOT_SUFFIX}`)
    try {
      return new Slot(file, bellPath(inboxFile))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      fs.mkdirSync(spoolDir(inboxFile), { recursive: true, mode: DIR_MODE })
      return new Slot(file, bellPath(inboxFile))
    }
  }

  /** True when the bell is watched; otherwise the caller must poll. */
  get watched(): boolean {
    return this.watch.armed
  }

  /** False once the file is gone (e.g. the team directory was deleted): fill a new slot instead. */
  usable(): boolean {
    return !this.closed && !this.gone()
  }

  /**
   * Fills the (empty) slot. One positioned write of the whole content: a merger that reads it
   * half-written cannot parse it and leaves it for the next merge.
   */
  fill(entries: InboxMessage[]): void {
    const key = `${String(Date.now()).padStart(15, '0')}-${String(process.pid).padStart(10, '0')}-${String(sequence++).padStart(12, '0')}`
    const text = JSON.stringify({ key, entries })
    const written = fs.writeSync(this.fd, text, 0, 'utf8')
    if (written === Buffer.byteLength(text)) return
    const data = Buffer.from(text) // a short write (a full disk, say): the rest, or the error
    for (let at = written; at < data.length; ) at += fs.writeSync(this.fd, data, at, data.length - at, at)
  }

  /** True once a merger emptied the slot: its entries are in the inbox. */
  emptied(): boolean {
    return fs.readSync(this.fd, this.probe, 0, 1, 0) === 0
  }

  /** True when the file was removed under us (the team directory deleted, say). */
  gone(): boolean {
    return fs.fstatSync(this.fd).nlink === 0
  }

  /** True while a process that needs the lock for a mark asked writers to leave it the lock (bell.ts). */
  handRaised(): boolean {
    return handRaised(this.bellFd)
  }

  /**
   * Calls `fn` each time the spool's bell rings: a holder merged (and emptied) slots, or released
   * the lock while slots still wait. Returns the cancel.
   */
  onBell(fn: () => void): () => void {
    this.onRing = fn
    return () => (this.onRing = undefined)
  }

  /**
   * Takes back entries not yet merged: true when they were still there (now withdrawn: the slot is
   * removed and never used again), false when a merger had already emptied the slot.
   */
  withdraw(): boolean {
    if (this.emptied()) return false
    this.close()
    try {
      fs.unlinkSync(this.file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    return true
  }

  /** Marks the slot in use by an append: the idle timer leaves it alone. */
  busy(): void {
    this.inUse = true
  }

  /**
   * Keeps the slot for the next append; closes it (removing the empty file) once IDLE_CLOSE_MS
   * pass without one. Called after each append; the timer is re-armed, not re-created.
   */
  idle(onClose: () => void): void {
    this.inUse = false
    this.onIdle = onClose
    if (this.idleTimer) {
      this.idleTimer.refresh()
      return
    }
    this.idleTimer = setTimeout(() => {
      if (this.inUse) return // re-armed by idle() when the append is done
      this.close()
      this.onIdle?.()
    }, IDLE_CLOSE_MS)
    this.idleTimer.unref()
  }

  /** Stops watching and closes the descriptor; an empty slot file is removed. */
  close(): void {
    if (this.closed) return
    this.closed = true
    open.delete(this)
    if (open.size === 0) {
      disposeExitHook?.()
      disposeExitHook = undefined
    }
    clearTimeout(this.idleTimer)
    this.watch.close()
    try {
      if (this.emptied()) fs.unlinkSync(this.file)
    } catch {
      // Already removed, or the directory is gone (team deleted): nothing left to clean.
    }
    fs.closeSync(this.fd)
    fs.closeSync(this.bellFd)
  }
}
