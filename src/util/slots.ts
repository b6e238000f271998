/**
 * A counting semaphore for async work: at most `limit` holders at once, the others wait in order;
 * a waiter whose signal aborts leaves the queue without taking a slot.
 */
import { onAbort } from './abort.js'

export interface Slots {
  /** Resolves with a release function once a slot is free, or undefined when `signal` aborts first. */
  take(signal: AbortSignal): Promise<(() => void) | undefined>
}

export function slots(limit: number): Slots {
  let used = 0
  const waiting: Array<() => void> = []
  const release = () => {
    used--
    waiting.shift()?.()
  }
  return {
    async take(signal) {
      while (used >= limit) {
        if (signal.aborted) return undefined
        await new Promise<void>((resolve) => {
          const wake = () => {
            unlisten()
            resolve()
          }
          waiting.push(wake)
          const unlisten = onAbort(signal, () => {
            const i = waiting.indexOf(wake)
            if (i >= 0) waiting.splice(i, 1)
            resolve()
          })
        })
      }
      if (signal.aborted) return undefined
      used++
      let released = false
      return () => {
        if (!released) {
          released = true
          release()
        }
      }
    },
  }
}
