import fs from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CorruptFileError } from '../../src/errors.js'
import { ARCHIVE_THRESHOLD, archivePath, readArchive } from '../../src/mailbox/archive.js'
import { appendMessage, appendMessages, markRead, readInbox } from '../../src/mailbox/inbox.js'
import { type TempHome, useInbox } from './helpers.js'

let home: TempHome
let file: string
useInbox('bob', (t) => ({ home, file } = t))

const batch = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ from: 'alice', text: `${tag}${i}` }))

describe('archive', () => {
  it('lives beside the inbox as <agent>.archive.jsonl', () => {
    expect(archivePath(file)).toBe(file.replace(/bob\.json$/, 'bob.archive.jsonl'))
  })

  it('keeps read messages in the inbox up to the threshold', async () => {
    await appendMessages(file, batch(ARCHIVE_THRESHOLD, 'r'))
    await markRead(file, 'all')
    await appendMessage(file, { from: 'alice', text: 'new' })
    expect(await readInbox(file)).toHaveLength(ARCHIVE_THRESHOLD + 1)
    expect(await readArchive(file)).toEqual([])
  })

  it('past the threshold moves read history to the archive (0600) and keeps unread messages', async () => {
    const old = await appendMessages(file, batch(10_000, 'old'))
    await markRead(file, 'all')
    const unread = await appendMessages(file, batch(3, 'unread'))
    // markRead above already archived: the inbox holds only what is unread.
    expect(await readInbox(file)).toEqual(unread)
    const history = await readArchive(file)
    expect(history.map((m) => m.msg_id)).toEqual(old.map((m) => m.msg_id))
    expect(history.every((m) => m.read === true)).toBe(true)
    expect((await fs.stat(archivePath(file))).mode & 0o777).toBe(0o600)
    // Further read messages are appended after the earlier history, in order.
    await markRead(file, 'all')
    await appendMessages(file, batch(ARCHIVE_THRESHOLD, 'more'))
    await markRead(file, 'all')
    const all = await readArchive(file)
    expect(all.slice(0, 10_000 + 3).map((m) => m.text)).toEqual([...old, ...unread].map((m) => m.text))
    expect(all).toHaveLength(10_000 + 3 + ARCHIVE_THRESHOLD)
    expect(await readInbox(file)).toEqual([])
  })

  it('skips a torn line left by a crash, dedups an entry archived twice, and names the file for real corruption', async () => {
    await appendMessages(file, batch(ARCHIVE_THRESHOLD + 1, 'a'))
    await markRead(file, 'all')
    const archive = archivePath(file)
    const lines = (await fs.readFile(archive, 'utf8')).trimEnd().split('\n')
    // A crash after the archive append but before the inbox rename archives an entry again;
    // a crash mid-append leaves a line without its end.
    await fs.appendFile(archive, lines[0] + '\n' + lines[1].slice(0, 30))
    await appendMessages(file, batch(ARCHIVE_THRESHOLD + 1, 'b'))
    await markRead(file, 'all')
    const history = await readArchive(file)
    expect(history).toHaveLength(2 * (ARCHIVE_THRESHOLD + 1))
    expect(new Set(history.map((m) => m.msg_id)).size).toBe(history.length)

    await fs.appendFile(archive, '{"not":"an entry"}\n')
    const err = await readArchive(file).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CorruptFileError)
    expect((err as Error).message).toContain(archive)
  })
})
