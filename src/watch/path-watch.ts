import fs from 'node:fs'
import { idlePoll } from './idle-poll.js'

/*
 * The one fs.watch of swarm: a file or directory watched for "look again", with an optional safety
 * poll that calls the same callback. Nothing here throws: a watch that cannot be set up comes back
 * unarmed with its `error`, one that breaks later is closed and reported to `onError`; the poll,
 * or the caller's own timer, covers both. One close() stops the watch and the poll.
 */

/** What woke the callback: fs.watch's event, or the safety poll. */
export type WatchEvent = 'rename' | 'change' | 'poll'

export interface PathWatchOptions {
  /** Safety poll: the callback also runs this often (an entry of WATCH_INTERVALS); none by default. */
  pollMs?: number
  /** With pollMs: while no event comes, the poll slows down to this (watch/idle-poll.ts); default pollMs. */
  idlePollMs?: number
  /**
   * A watch that was armed broke (the directory went away, the watch failed); it is closed and
   * `armed` is false from then on. Called asynchronously, never from watchPath itself. Default:
   * nothing — the poll or the caller's timer decides from then on.
   */
  onError?: (err: unknown) => void
  /** Let the process exit while only this watch (and its poll) is open. */
  unref?: boolean
}

export interface PathWatch {
  /** True while the OS watch is open. */
  readonly armed: boolean
  /** Why it is not armed: the error it could not be set up with, or the one it broke with. */
  readonly error: unknown
  close(): void
}

/**
 * Watches `target` (a file: follows its inode, so a rename over it ends the events; a directory:
 * every entry created, renamed or written in it). `onChange` gets the entry's name (null when the
 * platform does not say, and for a poll).
 */
export function watchPath(target: string, onChange: (name: string | null, event: WatchEvent) => void, opts: PathWatchOptions = {}): PathWatch {
  let watcher: fs.FSWatcher | undefined
  let error: unknown
  let closed = false
  const poll = opts.pollMs
    ? idlePoll(() => onChange(null, 'poll'), { minMs: opts.pollMs, maxMs: opts.idlePollMs ?? opts.pollMs, ...(opts.unref && { unref: true }) })
    : undefined
  try {
    const w = fs.watch(target, (event, name) => {
      if (closed) return
      poll?.wake()
      onChange(name === null ? null : String(name), event)
    })
    w.on('error', (err) => {
      if (watcher !== w) return
      w.close()
      watcher = undefined
      error = err
      opts.onError?.(err)
    })
    if (opts.unref) w.unref()
    watcher = w
  } catch (err) {
    error = err // e.g. ENOENT, or out of inotify watches
  }
  return {
    get armed() {
      return watcher !== undefined
    },
    get error() {
      return error
    },
    close() {
      closed = true
      poll?.close()
      watcher?.close()
      watcher = undefined
    },
  }
}
