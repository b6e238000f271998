import { type FSWatcher, watch } from 'chokidar'

/*
 * Watching a directory tree (chokidar) for "something changed, look again": events are coalesced
 * into one call per burst, a slow sweep catches what no event reports, and the watch ends when
 * the directory goes away. The one watch of swarm that is not path-watch.ts: a whole tree whose
 * subdirectories come and go (a team's members, their agents' dirs), which fs.watch follows on
 * Linux only with `recursive`, a userland walk in Node 20 that chokidar does for us, together
 * with the removal of the root.
 */

export interface TreeWatchOptions {
  /**
   * Quiet time after an event before `onChange` runs. Kept above chokidar's 50 ms `change`
   * throttle (DESIGN §10: it drops the trailing event of a burst): a dropped event follows an
   * emitted one by < 50 ms, so the call that emitted one schedules already reads past it.
   */
  debounceMs?: number
  /** Safety poll: `onChange` also runs this often (an entry of WATCH_INTERVALS). */
  sweepMs?: number
  /** Called when the root is deleted or the watch fails. */
  onGone?: () => void
}

export interface TreeWatch {
  /** Resolves once the initial scan is done (events from then on are seen). */
  readonly ready: Promise<void>
  close(): Promise<void>
}

const CHOKIDAR_THROTTLE_MS = 50

export function watchTree(root: string, onChange: () => void, opts: TreeWatchOptions = {}): TreeWatch {
  const debounceMs = Math.max(opts.debounceMs ?? 100, CHOKIDAR_THROTTLE_MS * 2)
  let timer: NodeJS.Timeout | undefined
  const schedule = () => {
    clearTimeout(timer)
    timer = setTimeout(onChange, debounceMs)
  }
  const watcher: FSWatcher = watch(root, { ignoreInitial: true, persistent: true })
  watcher.on('all', (event, file) => {
    if (event === 'unlinkDir' && file === root) opts.onGone?.()
    else schedule()
  })
  watcher.on('error', () => opts.onGone?.())
  const sweep = opts.sweepMs ? setInterval(schedule, opts.sweepMs) : undefined
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()))
  return {
    ready,
    async close() {
      clearInterval(sweep)
      clearTimeout(timer)
      await watcher.close()
    },
  }
}
