import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readInbox } from '../../src/mailbox/inbox.js'
import { inboxPath } from '../../src/home/paths.js'
import { LOCK_STALE_MS } from '../../src/util/lock.js'
import { reapAll, requireBuild, startNode, tempHome, WRITER, type Proc } from './helpers.js'

/*
 * Finding 5 of issue 12: a lock holder stopped past the stale time (Ctrl-Z, a VM pause) resumes
 * and must not rename its old copy over the inbox that another writer committed meanwhile. Real
 * writer processes, a real SIGSTOP of whichever of them holds the lock, real stale recovery.
 */

const WRITERS = 8
const RUNS = 3

let home: Awaited<ReturnType<typeof tempHome>>
let file: string
beforeAll(requireBuild)
beforeEach(async () => {
  home = await tempHome()
})
afterEach(async () => {
  await reapAll()
  await home.cleanup()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The lock directory's identity (a new holder makes a new directory), or undefined when free. */
function lockId(): string | undefined {
  const stat = fs.statSync(`${file}.lock`, { throwIfNoEntry: false, bigint: true })
  return stat && `${stat.ino}:${stat.birthtimeNs}:${stat.mtimeNs}`
}

/**
 * Stops writers one at a time until the stopped one is seen to hold the lock: the same lock
 * directory stays in place for 300 ms, where a running holder keeps it at most ~25 ms.
 */
async function stopTheHolder(writers: Proc[]): Promise<{ holder: Proc; lock: string }> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const candidate = writers[attempt % writers.length]
    candidate.child.kill('SIGSTOP')
    await sleep(20)
    const lock = lockId()
    await sleep(300)
    if (lock !== undefined && lockId() === lock) return { holder: candidate, lock }
    candidate.child.kill('SIGCONT')
    await sleep(30)
  }
  throw new Error('never caught a writer holding the lock')
}

function acked(writers: Proc[]): string[] {
  return writers.flatMap((w) =>
    w
      .output()
      .split('\n')
      .filter((l) => l.startsWith('ack '))
      .map((l) => l.slice(4)),
  )
}

describe('fenced inbox commits (real processes, real SIGSTOP)', () => {
  it(`a holder stopped past the stale time among ${WRITERS} writers loses no acknowledged message (${RUNS} runs)`, async () => {
    const lostPerRun: number[] = []
    for (let run = 0; run < RUNS; run++) {
      file = inboxPath('alpha', `lead${run}`, home.env) // a fresh inbox each run: unread ones are never archived
      const stopFile = path.join(home.home, `stop-${run}`)
      const writers = Array.from({ length: WRITERS }, (_, w) => startNode([WRITER, 'acked', file, `r${run}w${w}`, stopFile], home.env))
      await Promise.all(writers.map((w) => w.waitForLine('started')))
      await sleep(200)
      const { holder, lock } = await stopTheHolder(writers)
      // The others wait for the stale time, then one of them takes the lock over and commits.
      const stoppedAt = Date.now()
      while (lockId() === lock) {
        if (Date.now() - stoppedAt > LOCK_STALE_MS * 3) throw new Error('the stale lock was never taken over')
        await sleep(20)
      }
      expect(Date.now() - stoppedAt).toBeGreaterThan(LOCK_STALE_MS / 2) // taken over as stale, not released
      const ackedBefore = acked(writers).length
      await sleep(300)
      expect(acked(writers).length).toBeGreaterThan(ackedBefore) // others' messages were acknowledged meanwhile
      holder.child.kill('SIGCONT')
      await sleep(500)
      fs.writeFileSync(stopFile, '')
      const codes = await Promise.all(writers.map((w) => w.exited))
      expect(codes, writers.map((w) => w.output()).join('\n---\n')).toEqual(writers.map(() => 0))
      const present = new Set(
        (await readInbox(file)).map((m) => {
          const { w, i } = JSON.parse(m.text) as { w: string; i: number }
          return `${w} ${i}`
        }),
      )
      const lost = acked(writers).filter((key) => !present.has(key))
      lostPerRun.push(lost.length)
    }
    expect(lostPerRun).toEqual(Array.from({ length: RUNS }, () => 0))
  }, 120_000)
})
