import fs from 'node:fs/promises'
import lockfile from 'proper-lockfile'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { appendMessage, appendMessages, markRead, readInbox } from '../../src/mailbox/inbox.js'
import { spoolDir } from '../../src/mailbox/spool.js'
import { inboxPath } from '../../src/teams/paths.js'
import { tempHome } from './helpers.js'

let home: Awaited<ReturnType<typeof tempHome>>
let file: string
beforeEach(async () => {
  home = await tempHome()
  file = inboxPath('alpha', 'lead', home.env)
})
afterEach(() => home.cleanup())

const spoolNames = async () => (await fs.readdir(spoolDir(file)).catch(() => [] as string[])).filter((n) => n.endsWith('.json'))

describe('waiting for the inbox lock', () => {
  it('appends and markRead queued behind a foreign holder (Claude Code) all complete once it releases', async () => {
    await appendMessage(file, { from: 'alice', text: 'before' })
    // Another tool holds the lock the way Claude Code does: same lock directory, no spool.
    const release = await lockfile.lock(file, { lockfilePath: `${file}.lock`, realpath: false })
    let settled = 0
    const track = <T>(p: Promise<T>) => p.finally(() => settled++)
    const appends = Array.from({ length: 12 }, (_, i) => track(appendMessage(file, { from: 'bob', text: `m${i}` })))
    const batch = track(appendMessages(file, [{ from: 'carol', text: 'x' }, { from: 'carol', text: 'y' }]))
    const marked = track(markRead(file, 'all'))
    await new Promise((r) => setTimeout(r, 150))
    expect(settled).toBe(0) // nobody wrote under a held lock
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['before'])
    expect(await spoolNames()).toHaveLength(13)
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
    expect(await spoolNames()).toEqual([])
  })
})
