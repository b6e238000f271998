import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readInbox } from '../../src/mailbox/inbox.js'
import { inboxPath } from '../../src/home/paths.js'
import { LOCK_STALE_MS } from '../../src/util/lock.js'
import { reapAll, requireBuild, startNode, tempHome, WRITER, type Proc } from './helpers.js'
import { waitFor } from '../support/wait.js'

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

/** The lock directory's identity (a new holder makes a new directory) and mtime, or undefined when free. */
function lockNow(): { id: string; mtimeMs: number } | undefined {
  const stat = fs.statSync(`${file}.lock`, { throwIfNoEntry: false, bigint: true })
  return stat && { id: `${stat.ino}:${stat.birthtimeNs}:${stat.mtimeNs}`, mtimeMs: Number(stat.mtimeMs) }
}

/**
 * Stops writers one at a time until the stopped one is the holder: its lock directory then stays
 * until it goes stale and another writer takes it over, where a running holder's goes within
 * milliseconds (a hold lasts at most ~25 ms). Returns once the lock was taken over.
 */
async function stopTheHolderUntilTakenOver(writers: Proc[]): Promise<Proc> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const candidate = writers[attempt % writers.length]
    candidate.child.kill('SIGSTOP')
    await sleep(20)
    const lock = lockNow()
    if (lock) {
      while (lockNow()?.id === lock.id) await sleep(20)
      // Gone long after its last refresh: taken over as stale, so the stopped writer held it.
      if (Date.now() - lock.mtimeMs > LOCK_STALE_MS * 0.9) return candidate
    }
    candidate.child.kill('SIGCONT')
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
      const holder = await stopTheHolderUntilTakenOver(writers)
      const ackedBefore = acked(writers).length
      // Others' messages are acknowledged while the holder stays stopped.
      await waitFor('another writer to acknowledge a message', () => acked(writers).length > ackedBefore, 15_000, {
        output: () => writers.map((w) => w.output()).join('\n---\n'),
      })
      const holderBefore = acked([holder]).length
      holder.child.kill('SIGCONT')
      // The commit it was stopped in has ended (renamed or fenced off) once it acknowledges its next message.
      await waitFor('the resumed holder to acknowledge its next message', () => acked([holder]).length > holderBefore, 15_000, {
        output: holder.output,
      })
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
      if (lost.length) process.stderr.write(`run ${run}: lost ${lost.join(', ')}\n`)
    }
    expect(lostPerRun).toEqual(Array.from({ length: RUNS }, () => 0))
  }, 120_000)
})
