import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CorruptFileError } from '../../src/errors.js'
import { messageKey, messageState } from '../../src/mailbox/entry.js'
import { appendMessage, markRead, readInbox } from '../../src/mailbox/inbox.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { watchInbox, type InboxWatcher } from '../../src/mailbox/watch.js'
import { teamsDir } from '../../src/home/paths.js'
import { requireBuild, runNode, type TempHome, useInbox, WRITER } from './helpers.js'
import { waitFor } from '../support/wait.js'
import { WATCH_INTERVALS } from '../../src/watch/intervals.js'

/** Long enough that only events (not the safety poll) can explain a delivery within a test. */
const NO_POLL = 600_000

let home: TempHome
let file: string
const watchers: InboxWatcher[] = []
beforeAll(requireBuild)
useInbox('lead', (t) => ({ home, file } = t))
// Registered after useInbox, so it runs before it: the watchers close before the home goes.
afterEach(() => Promise.all(watchers.splice(0).map((w) => w.close())))

function collect(opts: Parameters<typeof watchInbox>[3] = {}) {
  const got: InboxMessage[] = []
  const errors: unknown[] = []
  const watcher = watchInbox('alpha', 'lead', (batch) => void got.push(...batch), {
    env: home.env,
    pollMs: NO_POLL,
    onError: (e) => errors.push(e),
    ...opts,
  })
  watchers.push(watcher)
  return { got, errors, watcher, texts: () => got.map((m) => m.text) }
}

describe('watchInbox', () => {
  it('sees every message of 20 bursts of 50 rapid appends from another process exactly once', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    const { got, errors, watcher } = collect()
    await watcher.ready
    await runNode([WRITER, 'bursts', file, '20', '50', '15'])
    await waitFor('1000 messages', () => got.length >= 1000, 15_000, { output: () => `got ${got.length}` })
    await watcher.rescan()
    const seq = got.map((m) => (JSON.parse(m.text) as { i: number }).i)
    expect(seq).toHaveLength(1000)
    expect(seq).toEqual([...Array(1000).keys()])
    expect(errors).toEqual([])
  }, 90_000) // 1000 appends by a second Node process: ~5 s quiet, over 30 s at load 14 on 2 cores

  it('stays exactly-once while the recipient consumes and archives concurrently', async () => {
    const consumed: Promise<number>[] = []
    const errors: unknown[] = []
    const got2: InboxMessage[] = []
    const w2 = watchInbox(
      'alpha',
      'lead',
      (batch) => {
        got2.push(...batch)
        consumed.push(markRead(file, { msgIds: batch.map(messageKey) }))
      },
      { env: home.env, pollMs: NO_POLL, onError: (e) => errors.push(e) },
    )
    watchers.push(w2)
    await w2.ready
    await runNode([WRITER, 'bursts', file, '10', '50', '5'])
    await waitFor('500 messages in the second watcher', () => got2.length >= 500, 15_000, { output: () => `got ${got2.length}` })
    await Promise.all(consumed)
    await w2.rescan()
    const seq = got2.map((m) => (JSON.parse(m.text) as { i: number }).i)
    expect(seq).toEqual([...Array(500).keys()])
    expect(errors).toEqual([])
    expect((await readInbox(file)).filter((m) => m.read !== true)).toEqual([])
  }, 90_000)

  it('works when neither the team directory nor the file exists yet', async () => {
    const { texts, watcher } = collect()
    await watcher.ready
    await appendMessage(file, { from: 'alice', text: 'first ever' })
    await waitFor('the first message', () => texts().length === 1)
    await appendMessage(file, { from: 'alice', text: 'second' })
    await waitFor('the second message', () => texts().length === 2)
    expect(texts()).toEqual(['first ever', 'second'])
  })

  it('recovers after the whole team directory is deleted and recreated (safety poll re-arms)', async () => {
    const { texts, watcher } = collect({ pollMs: 100 })
    await appendMessage(file, { from: 'alice', text: 'one' })
    await watcher.ready
    await waitFor('the message sent before the watch', () => texts().length === 1)
    await fs.rm(teamsDir(home.env), { recursive: true })
    await appendMessage(file, { from: 'alice', text: 'two' })
    await waitFor('the message after the directory came back', () => texts().length === 2)
    expect(texts()).toEqual(['one', 'two'])
  })

  it('hands over what was already unread on start, skips read ones and the keys in `skip`', async () => {
    const a = await appendMessage(file, { from: 'alice', text: 'a' })
    await appendMessage(file, { from: 'alice', text: 'b' })
    const c = await appendMessage(file, { from: 'alice', text: 'c' })
    await markRead(file, { msgIds: [a.msg_id!] })
    const { texts, watcher } = collect({ skip: [c.msg_id!] })
    await watcher.ready
    expect(texts()).toEqual(['b'])
  })

  it('delivers read entries too for an observer (includeRead), and records delivery when asked', async () => {
    await appendMessage(file, { from: 'alice', text: 'x' })
    await markRead(file, 'all')
    const observer = collect({ includeRead: true })
    await observer.watcher.ready
    expect(observer.texts()).toEqual(['x'])

    const recipient = collect({ markDelivered: true })
    await recipient.watcher.ready
    await appendMessage(file, { from: 'alice', text: 'y' })
    await waitFor('the recipient to mark it delivered', async () => (await readInbox(file)).map(messageState).join() === 'read,delivered')
    expect(recipient.texts()).toEqual(['y'])
  })

  it('leaves the delivered mark out when the recipient read the message first, and makes it at close when it did not', async () => {
    const recipient = collect({ markDelivered: true })
    await recipient.watcher.ready
    const quick = await appendMessage(file, { from: 'alice', text: 'quick' })
    await waitFor('the message handed over', () => recipient.got.length === 1)
    await markRead(file, { msgIds: [quick.msg_id!] }) // a short turn: read before the mark is due
    await new Promise((r) => setTimeout(r, WATCH_INTERVALS.deliveredMark + 300))
    const [read] = await readInbox(file)
    expect(messageState(read)).toBe('read')
    expect(read.deliveredAt).toBeUndefined()

    await appendMessage(file, { from: 'alice', text: 'long' })
    await waitFor('the second handed over', () => recipient.got.length === 2)
    await recipient.watcher.close() // before the mark was due: made now, not lost
    expect((await readInbox(file)).map(messageState)).toEqual(['read', 'delivered'])
    expect(recipient.texts()).toEqual(['quick', 'long'])
    expect(recipient.errors).toEqual([])
  })

  it('reports a corrupt inbox through onError (naming the file) and resumes once it is fixed', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, '[{"from": ')
    const { texts, errors, watcher } = collect()
    await watcher.ready
    await waitFor('the corrupt-file error', () => errors.length === 1)
    expect(errors[0]).toBeInstanceOf(CorruptFileError)
    expect((errors[0] as Error).message).toContain(file)
    await appendMessage(file, { from: 'alice', text: 'fresh' }, { onCorrupt: () => {} })
    await waitFor('the message after the repair', () => texts().length === 1)
    expect(texts()).toEqual(['fresh'])
  })

  it('calls nothing after close() or an aborted signal', async () => {
    const abort = new AbortController()
    const { texts, watcher } = collect({ signal: abort.signal })
    await watcher.ready
    abort.abort()
    await appendMessage(file, { from: 'alice', text: 'late' })
    await watcher.rescan()
    expect(texts()).toEqual([])
  })

  it('close() (or the signal) while the watch is being armed leaves no watch open', async () => {
    // A closed fs.watch leaves the list on the next turn of the event loop.
    const settle = () => new Promise((r) => setTimeout(r, 50))
    const watches = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length
    await settle()
    const before = watches()
    const closed = collect()
    void closed.watcher.close()
    const abort = new AbortController()
    const aborted = collect({ signal: abort.signal })
    abort.abort()
    await Promise.all([closed.watcher.ready, aborted.watcher.ready])
    await settle()
    expect(watches()).toBe(before)
  })

  it('keeps going when the callback throws, reporting the error', async () => {
    const errors: unknown[] = []
    const got: string[] = []
    const watcher = watchInbox(
      'alpha',
      'lead',
      (batch) => {
        got.push(...batch.map((m) => m.text))
        if (got.length === 1) throw new Error('boom')
      },
      { env: home.env, pollMs: NO_POLL, onError: (e) => errors.push(e) },
    )
    watchers.push(watcher)
    await watcher.ready
    await appendMessage(file, { from: 'alice', text: 'one' })
    await waitFor('the first message', () => got.length === 1)
    await appendMessage(file, { from: 'alice', text: 'two' })
    await waitFor('the second message', () => got.length === 2)
    expect(got).toEqual(['one', 'two'])
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom'])
  })
})
