/**
 * Reacting to an AbortSignal that may have fired already: a listener added to an aborted signal
 * never runs, so whatever starts after an `await` (an agent assembled, a watch armed) must check
 * first. `onAbort` runs `fn` exactly once — at once when the signal is already aborted.
 */

/** Runs `fn` once when `signal` aborts (synchronously, now, when it already has); returns the removal. */
export function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined
  if (signal.aborted) {
    fn()
    return () => undefined
  }
  signal.addEventListener('abort', fn, { once: true })
  return () => signal.removeEventListener('abort', fn)
}
