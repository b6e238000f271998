import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CorruptFileError, ExitCode, SwarmError, UsageError } from '../../src/errors.js'
import { describeMessage } from '../../src/mailbox/describe.js'
import { messageKey, messageState } from '../../src/mailbox/entry.js'
import { appendMessage, appendMessages, markDelivered, markRead, readInbox } from '../../src/mailbox/inbox.js'
import { parseStructured } from '../../src/mailbox/messages.js'
import { MAX_MESSAGE_BYTES } from '../../src/mailbox/types.js'
import { type TempHome, useInbox } from './helpers.js'

const FIXTURE = new URL('./fixtures/claude-code-inbox.json', import.meta.url)

let home: TempHome
let file: string
useInbox('bob', (t) => ({ home, file } = t))

describe('append and read', () => {
  it('reads a missing inbox as empty and creates nothing', async () => {
    expect(await readInbox(file)).toEqual([])
    await expect(fs.access(path.dirname(file))).rejects.toThrow()
  })

  it('appends entries in Claude Code shape with msg_id, msgV and read false, file 0600', async () => {
    const entry = await appendMessage(file, { from: 'alice', text: 'hello', color: 'green', summary: 'greeting' })
    expect(entry).toMatchObject({ from: 'alice', text: 'hello', read: false, color: 'green', summary: 'greeting', msgV: 1 })
    expect(entry.msg_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Date(entry.timestamp).toISOString()).toBe(entry.timestamp)
    expect(await readInbox(file)).toEqual([entry])
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600)
    expect((await fs.stat(path.dirname(file))).mode & 0o777).toBe(0o700)
    const text = await fs.readFile(file, 'utf8')
    expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2))
  })

  it('appends a batch under one write, keeping extra fields and a caller-given timestamp and msg_id', async () => {
    const given = { from: 'team-lead', text: 'signed', timestamp: '2026-01-01T00:00:00.000Z', msg_id: 'm-1', leadSig: 'sig', custom: 7 }
    const written = await appendMessages(file, [given, { from: 'alice', text: 'second' }])
    const read = await readInbox(file)
    expect(read).toEqual(written)
    expect(read[0]).toMatchObject(given)
    expect(read.map((m) => m.text)).toEqual(['signed', 'second'])
  })

  it('refuses a text over 1 MiB with a clear error before touching the disk', async () => {
    const big = 'x'.repeat(MAX_MESSAGE_BYTES + 1)
    const err = await appendMessage(file, { from: 'alice', text: big }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SwarmError)
    expect((err as SwarmError).code).toBe('SWARM_MESSAGE_TOO_LARGE')
    expect((err as SwarmError).exitCode).toBe(ExitCode.usage)
    expect((err as Error).message).toMatch(/1048577 bytes.*limit is 1048576/)
    await expect(fs.access(file)).rejects.toThrow()
    // Exactly 1 MiB is allowed.
    await appendMessage(file, { from: 'alice', text: 'y'.repeat(MAX_MESSAGE_BYTES) })
    expect((await readInbox(file))[0].text.length).toBe(MAX_MESSAGE_BYTES)
  })

  it('refuses a message without sender or with a field a reader would reject', async () => {
    await expect(appendMessage(file, { from: '', text: 'x' })).rejects.toBeInstanceOf(UsageError)
    await expect(appendMessage(file, { from: 'a', text: 'x', type: 'not-a-message' })).rejects.toBeInstanceOf(UsageError)
    await expect(fs.access(file)).rejects.toThrow()
  })
})

describe('Claude Code compatibility', () => {
  it('reads an inbox written byte-for-byte as Claude Code writes it (no msg_id, no read, structured text)', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.copyFile(FIXTURE, file)
    const entries = await readInbox(file)
    expect(entries.map((m) => m.from)).toEqual(['team-lead', 'researcher', 'tester', 'team-lead'])
    expect(entries.map(messageState)).toEqual(['read', 'sent', 'sent', 'sent'])
    expect(parseStructured(entries[1].text)).toMatchObject({ type: 'idle_notification', idleReason: 'available' })
    expect(describeMessage(entries[1])).toBe('[idle_notification] researcher is idle (available)')
    expect(describeMessage(entries[0])).toBe('Review auth.ts')
    expect(messageKey(entries[3])).toBe('6f1c2a9e-3b7d-4e0a-9f51-2c8d4b7e1a03')
    expect(messageKey(entries[2])).toMatch(/^sha1:/)
  })

  it('appends to it in the same shape and leaves the existing entries byte-identical', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.copyFile(FIXTURE, file)
    const original = JSON.parse(await fs.readFile(FIXTURE, 'utf8')) as unknown[]
    await appendMessage(file, { from: 'alice', text: 'from swarm', color: 'purple' })
    const text = await fs.readFile(file, 'utf8')
    const written = JSON.parse(text) as Array<Record<string, unknown>>
    expect(text).toBe(JSON.stringify(written, null, 2))
    expect(written.slice(0, 4).map((e) => JSON.stringify(e))).toEqual(original.map((e) => JSON.stringify(e)))
    expect(Object.keys(written[4])).toEqual(['from', 'text', 'timestamp', 'read', 'color', 'msg_id', 'msgV'])
  })

  it('reads an epoch-ms timestamp (older builds) as ISO', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, JSON.stringify([{ from: 'a', text: 't', timestamp: 1767225600000, read: false }]))
    expect((await readInbox(file))[0].timestamp).toBe('2026-01-01T00:00:00.000Z')
  })
})

describe('corrupt inbox', () => {
  const garbage = '[{"from": "alice", "text": "cut off'

  it('a reader gets CorruptFileError naming the file and leaves it in place', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, garbage)
    const err = await readInbox(file).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CorruptFileError)
    expect((err as CorruptFileError).exitCode).toBe(ExitCode.corrupt)
    expect((err as Error).message).toContain(file)
    expect(await fs.readFile(file, 'utf8')).toBe(garbage)
  })

  it('a reader rejects valid JSON of the wrong shape', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, JSON.stringify({ not: 'an array' }))
    await expect(readInbox(file)).rejects.toBeInstanceOf(CorruptFileError)
  })

  it('a writer moves it aside with every byte, writes the new message into a fresh inbox, and says where', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, garbage)
    const reported: CorruptFileError[] = []
    const entry = await appendMessage(file, { from: 'alice', text: 'survives' }, { onCorrupt: (e) => reported.push(e) })
    expect(reported).toHaveLength(1)
    const movedTo = reported[0].movedTo!
    expect(movedTo).toMatch(/bob\.json\.corrupt-/)
    expect(reported[0].message).toContain(movedTo)
    expect(await fs.readFile(movedTo, 'utf8')).toBe(garbage)
    expect(await readInbox(file)).toEqual([entry])
  })

  it('markRead on a corrupt inbox moves it aside and throws, creating nothing', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, garbage)
    const err = await markRead(file, 'all').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CorruptFileError)
    expect(await fs.readFile((err as CorruptFileError).movedTo!, 'utf8')).toBe(garbage)
    await expect(fs.access(file)).rejects.toThrow()
  })
})

describe('markRead and markDelivered', () => {
  async function seed(n: number) {
    return appendMessages(
      file,
      Array.from({ length: n }, (_, i) => ({ from: 'alice', text: `m${i}` })),
    )
  }
  const states = async () => (await readInbox(file)).map(messageState)

  it('marks all', async () => {
    await seed(3)
    expect(await markRead(file, 'all')).toBe(3)
    expect(await states()).toEqual(['read', 'read', 'read'])
    expect(await markRead(file, 'all')).toBe(0)
  })

  it('marks by index, ignoring indexes past the end and refusing negative ones', async () => {
    await seed(3)
    expect(await markRead(file, [0, 2, 9])).toBe(2)
    expect(await states()).toEqual(['read', 'sent', 'read'])
    await expect(markRead(file, [-1])).rejects.toBeInstanceOf(UsageError)
  })

  it('marks by msgIds, including content keys of entries without msg_id', async () => {
    const [a, , c] = await seed(3)
    expect(await markRead(file, { msgIds: [a.msg_id!, c.msg_id!, 'unknown'] })).toBe(2)
    expect(await states()).toEqual(['read', 'sent', 'read'])
    await fs.copyFile(FIXTURE, file)
    const legacy = (await readInbox(file))[2]
    expect(await markRead(file, { msgIds: [messageKey(legacy)] })).toBe(1)
    expect((await readInbox(file))[2].read).toBe(true)
  })

  it('marks by predicate', async () => {
    await seed(4)
    expect(await markRead(file, (m, i) => m.text === 'm1' || i === 3)).toBe(2)
    expect(await states()).toEqual(['sent', 'read', 'sent', 'read'])
  })

  it('on a missing inbox changes nothing and creates no file', async () => {
    expect(await markRead(file, 'all')).toBe(0)
    expect(await markDelivered(file, ['x'])).toBe(0)
    await expect(fs.access(file)).rejects.toThrow()
  })

  it('keeps sent, delivered and read apart', async () => {
    const [a, b] = await seed(3)
    expect(await markDelivered(file, [a.msg_id!, b.msg_id!])).toBe(2)
    expect(await markDelivered(file, [a.msg_id!])).toBe(0)
    await markRead(file, { msgIds: [a.msg_id!] })
    expect(await states()).toEqual(['read', 'delivered', 'sent'])
    const [first] = await readInbox(file)
    expect(first.deliveredAt).toMatch(/^\d{4}-/)
  })
})
