import { watchPath, type PathWatch } from '../watch/path-watch.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'

/**
 * Runs `scan` whenever one of `dirs` changes, and every WATCH_INTERVALS.remoteRelay besides; never
 * two at once (a change during a scan runs one more after it). One close() stops it all.
 */
export function scanOnChange(dirs: string[], scan: () => Promise<void>, onError: (err: unknown) => void): { close(): void; now(): void } {
  let running = false
  let again = false
  let closed = false
  const run = () => {
    if (closed) return
    if (running) {
      again = true
      return
    }
    running = true
    void scan()
      .catch(onError)
      .finally(() => {
        running = false
        if (again) {
          again = false
          run()
        }
      })
  }
  const watches: PathWatch[] = dirs.map((d, k) => watchPath(d, () => run(), k === 0 ? { pollMs: WATCH_INTERVALS.remoteRelay } : {}))
  run()
  return {
    now: run,
    close() {
      closed = true
      for (const w of watches) w.close()
    },
  }
}
