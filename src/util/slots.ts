/**
 * A counting semaphore for async work: at most `limit` holders at once, the others wait in order;
 * a freed slot is handed to the oldest waiter (a newcomer does not overtake it), and a waiter whose
 * signal aborts — while it waits or just as its slot comes — takes none and passes it on.
 */
import { onAbort } from './abort.js'

export interface Slots {
  /** Resolves with a release function once a slot is free, or undefined when `signal` aborts first. */
  take(signal: AbortSignal): Promise<(() => void) | undefined>
}

export function slots(limit: number): Slots {
  let used = 0
  const waiting: Array<() => void> = []
  /** Frees one slot: to the oldest waiter when there is one (it stays used), else back to the pool. */
  const free = () => {
    const next = waiting.shift()
    if (next) next()
    else used--
  }
  const holder = () => {
    let released = false
    return () => {
      if (!released) {
        released = true
        free()
      }
    }
  }
  return {
    async take(signal) {
      if (signal.aborted) return undefined
      if (used < limit) {
        used++
        return holder()
      }
      const granted = await new Promise<boolean>((resolve) => {
        const grant = () => {
          unlisten()
          resolve(true)
        }
        waiting.push(grant)
        const unlisten = onAbort(signal, () => {
          const i = waiting.indexOf(grant)
          if (i >= 0) waiting.splice(i, 1)
          resolve(false)
        })
      })
      if (!granted) return undefined
      // Handed a slot just as its signal aborted: the next waiter gets it.
      if (signal.aborted) {
        free()
        return undefined
      }
      return holder()
    },
  }
}
