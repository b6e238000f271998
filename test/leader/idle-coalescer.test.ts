import { describe, expect, it } from 'vitest'
import { IdleCoalescer } from '../../src/leader/idle-coalescer.js'
import type { InboxMessage } from '../../src/mailbox/types.js'

/* Idle notifications that come together reach the lead agent as one delivery, in order. */

const note = (from: string): InboxMessage => ({ from, text: `{"type":"idle_notification","from":"${from}"}`, timestamp: new Date().toISOString() })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('IdleCoalescer', () => {
  it('delivers notifications that arrive within the quiet time once, together, in order', async () => {
    const deliveries: string[][] = []
    const c = new IdleCoalescer((batch) => deliveries.push(batch.map((m) => m.from)))
    for (let i = 0; i < 20; i++) {
      c.hold(note(`m${i}`))
      await sleep(5)
    }
    expect(deliveries).toEqual([])
    await sleep(400)
    expect(deliveries).toEqual([Array.from({ length: 20 }, (_, i) => `m${i}`)])
  })

  it('never holds one longer than a second, however many keep coming', async () => {
    const deliveries: number[] = []
    const c = new IdleCoalescer((batch) => deliveries.push(batch.length))
    const started = Date.now()
    while (Date.now() - started < 1_600) {
      c.hold(note('busy'))
      await sleep(50)
    }
    c.flush()
    expect(deliveries.length).toBeGreaterThanOrEqual(2)
    expect(deliveries.reduce((a, b) => a + b, 0)).toBeGreaterThan(20)
  })

  it('flush() hands over what is held at once (before another message for the lead), and nothing twice', async () => {
    const deliveries: string[][] = []
    const c = new IdleCoalescer((batch) => deliveries.push(batch.map((m) => m.from)))
    c.hold(note('a'))
    c.hold(note('b'))
    c.flush()
    expect(deliveries).toEqual([['a', 'b']])
    await sleep(300)
    c.flush()
    expect(deliveries).toEqual([['a', 'b']])
  })
})
