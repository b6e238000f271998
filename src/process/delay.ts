/*
 * The one delay of the process module (and of every poll loop in swarm): resolves after `ms`, or
 * at once when `signal` aborts. Never rejects.
 */

export interface DelayOptions {
  /** Let the process exit while only this timer is pending. */
  unref?: boolean
}

export function delay(ms: number, signal?: AbortSignal, opts: DelayOptions = {}): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    if (opts.unref) timer.unref()
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}
