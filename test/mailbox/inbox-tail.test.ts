import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CorruptFileError } from '../../src/errors.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { InboxTail } from '../../src/mailbox/inbox-tail.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { tempHome } from './helpers.js'

let home: Awaited<ReturnType<typeof tempHome>>
let file: string
beforeEach(async () => {
  home = await tempHome()
  file = path.join(home.home, 'inbox.json')
})
afterEach(() => home.cleanup())

const entries = (...texts: string[]) => texts.map((text) => createEntry({ from: 'alice', text }))
/** As swarm and Claude Code 2.1.332 write an inbox. */
const write = (list: InboxMessage[]) => fs.writeFile(file, JSON.stringify(list, null, 2))

describe('InboxTail', () => {
  it('reads a missing or empty file as no entries', async () => {
    const tail = new InboxTail(file)
    expect(tail.read()).toEqual({ entries: [], from: 0 })
    await fs.writeFile(file, '')
    expect(tail.read()).toEqual({ entries: [], from: 0 })
  })

  it('parses only the entries appended since the last read, and says from where they are new', async () => {
    const tail = new InboxTail(file)
    const first = entries('a', 'b')
    await write(first)
    expect(tail.read()).toEqual({ entries: first, from: 0 })
    const more = [...first, ...entries('c', 'd', 'e')]
    await write(more)
    expect(tail.read()).toEqual({ entries: more, from: 2 })
    expect(tail.read()).toEqual({ entries: more, from: 5 }) // unchanged: nothing new
  })

  it('parses the whole file when entries changed (read, archived) or the format differs', async () => {
    const tail = new InboxTail(file)
    const list = entries('a', 'b', 'c')
    await write(list)
    tail.read()
    const marked = list.map((m, i) => (i === 0 ? { ...m, read: true } : m))
    await write([...marked, ...entries('d')])
    expect(tail.read()).toMatchObject({ from: 0 })
    const archived = [marked[1], marked[2]]
    await write(archived)
    expect(tail.read()).toEqual({ entries: archived, from: 0 })
    // Written compactly (another tool): still read right, whole.
    const compact = [...archived, ...entries('e')]
    await fs.writeFile(file, JSON.stringify(compact))
    expect(tail.read()).toEqual({ entries: compact, from: 0 })
  })

  it('does not take a rewrite that keeps the same prefix for an append', async () => {
    const tail = new InboxTail(file)
    const list = entries('a')
    await write(list)
    tail.read()
    // Same bytes up to the closing bracket, then an invalid tail: parsed whole, reported corrupt.
    await fs.writeFile(file, JSON.stringify(list, null, 2).slice(0, -2) + ',\n  {"from": 1}\n]')
    expect(() => tail.read()).toThrow(CorruptFileError)
    // The next good write is read against the last good read.
    const good = [...list, ...entries('b')]
    await write(good)
    expect(tail.read()).toEqual({ entries: good, from: 1 })
  })
})
