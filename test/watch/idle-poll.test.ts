import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { idlePoll } from '../../src/watch/idle-poll.js'
import { watchPath, type WatchEvent } from '../../src/watch/path-watch.js'
import { useTempDir } from '../support/home.js'
import { waitFor } from '../support/wait.js'

/* The safety poll that slows down while nothing happens (watch/idle-poll.ts), alone and in watchPath. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('idlePoll', () => {
  it('doubles its pause while nothing happens, up to maxMs, and is back at minMs after a wake', async () => {
    const runs: number[] = []
    const t0 = Date.now()
    const poll = idlePoll(() => runs.push(Date.now() - t0), { minMs: 40, maxMs: 160 })
    onTestFinished(() => poll.close())
    await waitFor('five runs', () => runs.length >= 5, 5_000)
    const gaps = runs.slice(1).map((t, i) => t - runs[i]!)
    // 40, 80, 160, 160, …: each gap at least the planned pause (timers never fire early).
    expect(runs[0]).toBeGreaterThanOrEqual(39)
    expect(gaps[0]).toBeGreaterThanOrEqual(79)
    expect(gaps[1]).toBeGreaterThanOrEqual(159)
    expect(gaps[2]).toBeGreaterThanOrEqual(159)
    expect(gaps[2]).toBeLessThan(400) // capped at maxMs, not still doubling (320)
    const woken = Date.now()
    const before = runs.length
    poll.wake()
    await waitFor('a run after the wake', () => runs.length > before, 5_000)
    expect(Date.now() - woken).toBeLessThan(140) // minMs from the wake, not the 160 ms pause
    poll.close()
    const closed = runs.length
    await sleep(250)
    expect(runs.length).toBe(closed)
  })

  it('with maxMs no longer than minMs, polls at a fixed rate', async () => {
    const runs: number[] = []
    const poll = idlePoll(() => runs.push(Date.now()), { minMs: 30, maxMs: 30 })
    onTestFinished(() => poll.close())
    await waitFor('six runs', () => runs.length >= 6, 5_000)
    const gaps = runs.slice(1).map((t, i) => t - runs[i]!)
    expect(Math.max(...gaps)).toBeLessThan(200)
  })
})

describe('watchPath with an idle poll', () => {
  let root: string
  useTempDir('swarm-idle-poll-', (d) => (root = d))

  it('polls slower while the directory is quiet, and fast again after an event', async () => {
    const polls: number[] = []
    const watch = watchPath(root, (_name, event: WatchEvent) => event === 'poll' && polls.push(Date.now()), { pollMs: 30, idlePollMs: 240 })
    onTestFinished(() => watch.close())
    await waitFor('polls slowed to the idle pause', () => polls.length >= 5 && polls.at(-1)! - polls.at(-2)! >= 230, 5_000)
    const written = Date.now()
    fs.writeFileSync(path.join(root, 'x.json'), '{}')
    await waitFor('two polls after the write', () => polls.filter((t) => t > written).length >= 2, 5_000)
    const after = polls.filter((t) => t > written)
    expect(after[1]! - written).toBeLessThan(200) // back at 30 ms, not 240
  })
})
