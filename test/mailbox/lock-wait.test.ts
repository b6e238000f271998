import lockfile from 'proper-lockfile'
import { beforeAll, describe, expect, it } from 'vitest'
import { readArchive } from '../../src/mailbox/archive.js'
import { appendMessage, appendMessages, markRead, readInbox } from '../../src/mailbox/inbox.js'
import { spoolDir } from '../../src/mailbox/spool.js'
import { pendingSpool, requireBuild, startNode, type TempHome, useInbox, WRITER } from './helpers.js'

let home: TempHome
let file: string
beforeAll(requireBuild)
useInbox('lead', (t) => ({ home, file } = t))

const waiting = () => pendingSpool(spoolDir(file))

describe('waiting for the inbox lock', () => {
  it('appends and markRead queued behind a foreign holder (Claude Code) all complete once it releases', async () => {
    await appendMessage(file, { from: 'alice', text: 'before' })
    // Another tool holds the lock the way Claude Code does: same lock directory, no spool.
    const release = await lockfile.lock(file, { lockfilePath: `${file}.lock`, realpath: false })
    let settled = 0
    const track = <T>(p: Promise<T>) => p.finally(() => settled++)
    const appends = Array.from({ length: 12 }, (_, i) => track(appendMessage(file, { from: 'bob', text: `m${i}` })))
    const batch = track(
      appendMessages(file, [
        { from: 'carol', text: 'x' },
        { from: 'carol', text: 'y' },
      ]),
    )
    const marked = track(markRead(file, 'all'))
    await new Promise((r) => setTimeout(r, 150))
    expect(settled).toBe(0) // nobody wrote under a held lock
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['before'])
    // This process's first append waits in its spool slot; the others queue behind it in memory.
    expect(await waiting()).toHaveLength(1)
    await release()
    await Promise.all([...appends, batch, marked])
    const inbox = await readInbox(file)
    const texts = inbox.map((m) => m.text)
    expect(texts).toHaveLength(15)
    expect(new Set(texts)).toEqual(new Set(['before', 'x', 'y', ...Array.from({ length: 12 }, (_, i) => `m${i}`)]))
    expect(texts.indexOf('x') + 1).toBe(texts.indexOf('y')) // one append's entries stay together, in order
    expect(new Set(inbox.map((m) => m.msg_id)).size).toBe(15)
    // markRead ran at some point after the release: 'before' at least is read.
    expect(inbox[0].read).toBe(true)
    expect(await waiting()).toEqual([])
  })

  it('markRead gets its turn while writer processes keep the lock busy, and nothing is lost or doubled', async () => {
    const writers = Array.from({ length: 4 }, (_, w) => startNode([WRITER, 'loop', file, `w${w}`]))
    await Promise.all(writers.map((p) => p.waitForLine('started')))
    // Appenders merging for each other hold the lock back to back; a mark raises its hand (bell.ts).
    let marked = 0
    for (let i = 0; i < 5; i++) marked += await markRead(file, 'all')
    expect(marked).toBeGreaterThan(0)
    for (const p of writers) p.child.kill('SIGKILL')
    await Promise.all(writers.map((p) => p.exited))
    await appendMessage(file, { from: 'alice', text: JSON.stringify({ w: 'last', i: 0 }) }) // merges what the killed left
    const all = [...(await readArchive(file)), ...(await readInbox(file))] // read entries past 100 were archived
    expect(new Set(all.map((m) => m.msg_id)).size).toBe(all.length)
    const sent = all.map((m) => JSON.parse(m.text) as { w: string; i: number })
    for (let w = 0; w < 4; w++) {
      const seq = sent.filter((m) => m.w === `w${w}`).map((m) => m.i)
      expect(seq.length).toBeGreaterThan(0)
      expect(seq).toEqual([...seq.keys()]) // every message of each writer, in order, none missing
    }
  })
})
