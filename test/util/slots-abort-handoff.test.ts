import { describe, expect, it } from 'vitest'
import { slots } from '../../src/util/slots.js'

/**
 * The relay's child slots: a waiter woken for a freed slot whose client leaves at that moment
 * must pass the slot on, or the next waiter waits with a slot free; and the woken waiter keeps
 * its turn over a newcomer.
 */
const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('slots', () => {
  it('a waiter aborted just as it is woken passes the freed slot to the next one', async () => {
    const s = slots(1)
    const release = await s.take(new AbortController().signal)
    const a = new AbortController()
    const first = s.take(a.signal)
    let second: (() => void) | undefined
    void s.take(new AbortController().signal).then((r) => {
      second = r
    })
    await tick()
    release?.()
    a.abort() // the first waiter's client left in the same tick its slot came free
    expect(await first).toBeUndefined()
    await tick()
    expect(second).toBeTypeOf('function')
  })

  it('a woken waiter is served before a newcomer that asks in the same tick', async () => {
    const s = slots(1)
    const release = await s.take(new AbortController().signal)
    const order: string[] = []
    void s.take(new AbortController().signal).then(() => order.push('waiter'))
    await tick()
    release?.()
    void s.take(new AbortController().signal).then(() => order.push('newcomer'))
    await tick()
    expect(order).toEqual(['waiter'])
  })
})
