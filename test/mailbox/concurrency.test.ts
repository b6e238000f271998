import fs from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { appendMessage, readInbox } from '../../src/mailbox/inbox.js'
import { spoolDir } from '../../src/mailbox/spool.js'
import { pendingSpool, requireBuild, runNode, startNode, type TempHome, useInbox, WRITER } from './helpers.js'

let home: TempHome
let file: string
beforeAll(requireBuild)
useInbox('lead', (t) => ({ home, file } = t))

describe('concurrent writers (real processes)', () => {
  it('8 writer processes appending at once: every message present exactly once', async () => {
    const WRITERS = 8
    const EACH = 60
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => runNode([WRITER, 'append', file, String(w), String(EACH)])))
    const entries = await readInbox(file)
    const keys = entries.map((m) => {
      const { w, i } = JSON.parse(m.text) as { w: string; i: number }
      return `${w}:${i}`
    })
    expect(keys).toHaveLength(WRITERS * EACH)
    expect(new Set(keys).size).toBe(WRITERS * EACH)
    expect(new Set(entries.map((m) => m.msg_id)).size).toBe(WRITERS * EACH)
    // Each writer's messages are in the order it sent them.
    for (let w = 0; w < WRITERS; w++) {
      const mine = keys.filter((k) => k.startsWith(`${w}:`)).map((k) => Number(k.split(':')[1]))
      expect(mine).toEqual([...mine].sort((a, b) => a - b))
    }
    // Written as JSON.stringify(entries, null, 2) (Claude Code's format), however many merges it took.
    const text = await fs.readFile(file, 'utf8')
    expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2))
    // The writers are gone: the lock is free (a merging writer that exits releases it), nothing waits.
    await expect(fs.access(`${file}.lock`)).rejects.toThrow()
    expect(await pendingSpool(spoolDir(file))).toEqual([])
  })

  it('a writer SIGKILLed while holding the lock: the inbox still parses and the next writer gets the lock after stale', async () => {
    await appendMessage(file, { from: 'alice', text: 'before' })
    const holder = startNode([WRITER, 'hold-lock', file])
    await holder.waitForLine('locked')
    holder.child.kill('SIGKILL')
    await holder.exited
    await expect(fs.access(`${file}.lock`)).resolves.toBeUndefined()
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['before'])
    await appendMessage(file, { from: 'alice', text: 'after' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['before', 'after'])
    await expect(fs.access(`${file}.lock`)).rejects.toThrow()
  })

  it('writers SIGKILLed at random points mid-append never leave a torn inbox or a stray temp file that breaks it', async () => {
    for (let round = 0; round < 3; round++) {
      const procs = [startNode([WRITER, 'loop', file, `k${round}a`]), startNode([WRITER, 'loop', file, `k${round}b`])]
      await Promise.all(procs.map((p) => p.waitForLine('started')))
      await new Promise((r) => setTimeout(r, 150 + round * 70))
      for (const p of procs) p.child.kill('SIGKILL')
      await Promise.all(procs.map((p) => p.exited))
      const entries = await readInbox(file)
      expect(Array.isArray(entries)).toBe(true)
      expect(new Set(entries.map((m) => m.msg_id)).size).toBe(entries.length)
    }
    // A lock a killed writer may have held is recovered and the next append lands, after any
    // entries a killed writer had spooled but not merged (sent late, never lost or doubled).
    const before = await readInbox(file)
    const leftover = (await fs.readdir(spoolDir(file))).length
    await appendMessage(file, { from: 'alice', text: 'last' })
    const after = await readInbox(file)
    expect(after.length).toBeGreaterThanOrEqual(before.length + 1)
    expect(after.length).toBeLessThanOrEqual(before.length + 1 + leftover)
    expect(after.at(-1)?.text).toBe('last')
    expect(new Set(after.map((m) => m.msg_id)).size).toBe(after.length)
    // Nothing merge-able stays in the spool: a slot or spool file left holding entries is only one a
    // writer was killed while writing (torn: merged never, moved aside once old). Empty slots, the
    // bell and a temp inbox of a merger killed before its rename (never read, swept after a minute)
    // may stay too.
    for (const name of await fs.readdir(spoolDir(file))) {
      if (name === 'bell' || name.endsWith('.tmp')) continue
      const text = await fs.readFile(path.join(spoolDir(file), name), 'utf8')
      if (text !== '') expect(() => JSON.parse(text)).toThrow()
    }
  })
})
