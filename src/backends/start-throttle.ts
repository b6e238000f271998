/**
 * Starting many teammates without starving the machine: their panes exist already, their commands
 * are let through at most `limit` at a time; one counts as started when its probe says so (or
 * after `capMs`), and whatever falls due together is released in one call. An item without a
 * probe (a plain command) takes no slot: it is released with the first call.
 */
import os from 'node:os'
import { delay } from '../process/delay.js'

/**
 * How many teammates may be starting at once on this machine (SWARM_START_CONCURRENCY overrides):
 * eight per core, at least eight. Measured at 64 swarm agents on 2 loaded cores: 4 at once made
 * all ready in 8.1 s, 8 in 6.7 s, 16 in 5.5 s, all 64 in 5.7 s; a start is mostly one CPU-bound
 * Node start-up (~0.15 CPU-s), so fewer only queue them; all at once was no faster.
 */
export function startConcurrency(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.SWARM_START_CONCURRENCY)
  if (Number.isInteger(configured) && configured > 0) return configured
  return Math.max(8, 8 * os.availableParallelism())
}

/** The longest one teammate holds a slot without saying it started (a crashed start frees it then). */
export const START_CAP_MS = 15_000
const POLL_MS = 40

export interface ThrottleOptions<T> {
  limit: number
  capMs?: number
  /** Lets `items` start (one backend call); a throw is retried once, then ends the throttle with it. */
  release(items: T[]): Promise<void>
  /** Has the item started since `since` (ms)? Undefined: the item has no probe and takes no slot. */
  probe(item: T): ((since: number) => Promise<boolean>) | undefined
  /** Called once per item, right after its release. */
  released?(item: T): void
}

/** Releases every item, in order, keeping at most `limit` probed ones starting; resolves once the last is released. */
export async function startThrottled<T>(items: T[], o: ThrottleOptions<T>): Promise<void> {
  const capMs = o.capMs ?? START_CAP_MS
  const queue = items.filter((i) => o.probe(i) !== undefined)
  const free = items.filter((i) => o.probe(i) === undefined)
  const starting = new Map<T, number>()
  const release = async (batch: T[]) => {
    if (batch.length === 0) return
    const since = Date.now()
    await o.release(batch).catch(() => o.release(batch))
    for (const item of batch) {
      if (o.probe(item)) starting.set(item, since)
      o.released?.(item)
    }
  }
  await release([...free, ...queue.splice(0, o.limit)])
  while (queue.length) {
    await delay(POLL_MS)
    const done = await Promise.all(
      [...starting].map(async ([item, since]) => Date.now() - since >= capMs || (await o.probe(item)!(since).catch(() => true))),
    )
    const items = [...starting.keys()]
    for (const [k, item] of items.entries()) if (done[k]) starting.delete(item)
    await release(queue.splice(0, o.limit - starting.size))
  }
}
