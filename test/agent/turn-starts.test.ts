import { afterEach, describe, expect, it, vi } from 'vitest'
import { afterTurnStarts, TURN_END_WAIT_MAX_MS, turnOnItsWay } from '../../src/agent/turn-starts.js'

/**
 * A turn's end waits for the process's other turns on their way to their first request (a hosted
 * leader's broadcast recipients), and never longer than TURN_END_WAIT_MAX_MS.
 */
afterEach(() => {
  vi.useRealTimers()
})

/** Whether `p` has settled once the microtasks and immediates queued now have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false
  void p.then(() => (done = true))
  await new Promise((r) => setImmediate(r))
  return done
}

describe('turns on their way', () => {
  it('nobody on the way: the end goes on at once', async () => {
    expect(await settled(afterTurnStarts())).toBe(true)
  })

  it('waits for every turn on its way; a second release counts once', async () => {
    const a = turnOnItsWay()
    const b = turnOnItsWay()
    const waiting = afterTurnStarts()
    a()
    a() // idempotent: b is still on its way
    expect(await settled(waiting)).toBe(false)
    b()
    expect(await settled(waiting)).toBe(true)
    expect(await settled(afterTurnStarts())).toBe(true)
  })

  it('a turn that never gets its request out holds nobody past the limit', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const stuck = turnOnItsWay()
    try {
      const waiting = afterTurnStarts()
      await vi.advanceTimersByTimeAsync(TURN_END_WAIT_MAX_MS - 1)
      expect(await settled(waiting)).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect(await settled(waiting)).toBe(true)
    } finally {
      stuck()
    }
  })
})
