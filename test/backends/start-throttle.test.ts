import { describe, expect, it } from 'vitest'
import { startConcurrency, startThrottled } from '../../src/backends/start-throttle.js'

/** Items that say they started a fixed time after their release; the throttle's calls recorded. */
function fakes(n: number, startMs: number, probed = true) {
  const releasedAt = new Map<number, number>()
  let starting = 0
  let most = 0
  const calls: number[][] = []
  return {
    items: Array.from({ length: n }, (_, i) => i),
    calls,
    most: () => most,
    release: async (batch: number[]) => {
      calls.push(batch)
      for (const i of batch) releasedAt.set(i, Date.now())
      starting += probed ? batch.length : 0
      most = Math.max(most, starting)
    },
    probe: (i: number) =>
      probed
        ? async () => {
            const done = Date.now() - releasedAt.get(i)! >= startMs
            if (done && releasedAt.has(i)) {
              releasedAt.delete(i)
              starting--
            }
            return done || !releasedAt.has(i)
          }
        : undefined,
  }
}

describe('startThrottled', () => {
  it('keeps at most `limit` starting, releases in order, several at once when they fall due together', async () => {
    const f = fakes(10, 60)
    await startThrottled(f.items, { limit: 3, release: f.release, probe: f.probe })
    expect(f.calls.flat()).toEqual(f.items)
    expect(f.most()).toBeLessThanOrEqual(3)
    expect(f.calls[0]).toEqual([0, 1, 2])
    expect(f.calls.length).toBeLessThan(10)
  })

  it('lets items without a probe through at once, with the first call', async () => {
    const f = fakes(20, 0, false)
    await startThrottled(f.items, { limit: 2, release: f.release, probe: f.probe })
    expect(f.calls).toEqual([f.items])
  })

  it('frees the slot of an item that never says it started after the cap', async () => {
    const t0 = Date.now()
    const calls: number[][] = []
    await startThrottled([1, 2, 3], { limit: 1, capMs: 100, release: async (b) => void calls.push(b), probe: () => async () => false })
    expect(calls).toEqual([[1], [2], [3]])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200)
  })

  it('retries a release that failed once, and fails with the second failure', async () => {
    let tries = 0
    const flaky = async () => {
      if (tries++ === 0) throw new Error('busy')
    }
    await startThrottled([1], { limit: 1, release: flaky, probe: () => undefined })
    expect(tries).toBe(2)
    await expect(startThrottled([1], { limit: 1, release: () => Promise.reject(new Error('gone')), probe: () => undefined })).rejects.toThrow('gone')
  })

  it('sizes itself to the machine unless SWARM_START_CONCURRENCY says otherwise', () => {
    expect(startConcurrency({})).toBeGreaterThanOrEqual(8)
    expect(startConcurrency({ SWARM_START_CONCURRENCY: '3' })).toBe(3)
    expect(startConcurrency({ SWARM_START_CONCURRENCY: 'x' })).toBeGreaterThanOrEqual(8)
  })
})
