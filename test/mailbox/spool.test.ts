import fs from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { CorruptFileError } from '../../src/errors.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { appendMessage, appendMessages, readInbox } from '../../src/mailbox/inbox.js'
import { clearSpooled, spoolDir } from '../../src/mailbox/spool.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { watchInbox } from '../../src/mailbox/watch.js'
import { appendContended, pendingSpool, requireBuild, runNode, type TempHome, useInbox, WRITER } from './helpers.js'
import { waitFor } from '../support/wait.js'

let home: TempHome
let file: string
beforeAll(requireBuild)
useInbox('lead', (t) => ({ home, file } = t))

/** A pid no process has here (the kernel's pid_max is at most 2^22). */
const DEAD_PID = 2 ** 22 + 7

/** A one-shot spool file (earlier versions) as a writer leaves it when it dies before merging: named `ageMs` ago. */
async function orphan(content: string, ageMs: number, tag = 'x'): Promise<string> {
  await fs.mkdir(spoolDir(file), { recursive: true })
  const name = `${String(Date.now() - ageMs).padStart(15, '0')}-99999-000000000-${tag}.json`
  const at = path.join(spoolDir(file), name)
  await fs.writeFile(at, content)
  return at
}

/** A slot as a killed writer leaves it: `content` written `ageMs` ago by process `pid`. */
async function orphanSlot(content: string, ageMs: number, pid = DEAD_PID, tag = 'dead'): Promise<string> {
  await fs.mkdir(spoolDir(file), { recursive: true })
  const at = path.join(spoolDir(file), `${pid}-${tag}-0.slot`)
  await fs.writeFile(at, content)
  const when = new Date(Date.now() - ageMs)
  await fs.utimes(at, when, when)
  return at
}

const slotContent = (key: string, ...entries: InboxMessage[]) => JSON.stringify({ key, entries })

const spoolNames = async () => (await fs.readdir(spoolDir(file)).catch(() => [] as string[])).sort()
const waiting = () => pendingSpool(spoolDir(file))

describe('append spool', () => {
  it('concurrent appends in one process all land exactly once and leave the spool empty', async () => {
    const sent = await Promise.all(Array.from({ length: 50 }, (_, i) => appendMessage(file, { from: 'alice', text: `m${i}` })))
    const inbox = await readInbox(file)
    expect(inbox).toHaveLength(50)
    expect(new Set(inbox.map((m) => m.msg_id))).toEqual(new Set(sent.map((m) => m.msg_id)))
    expect(await waiting()).toEqual([])
  })

  it("merges a dead writer's spooled entry with the next append, before it, without doubling one already merged", async () => {
    const first = await appendMessage(file, { from: 'alice', text: 'first' })
    const left = createEntry({ from: 'bob', text: 'left behind' })
    await orphan(JSON.stringify([left]), 5_000, 'a')
    // Killed between the inbox rename and the spool cleanup: already in the inbox.
    await orphan(JSON.stringify([first]), 4_000, 'b')
    await appendMessage(file, { from: 'alice', text: 'next' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['first', 'left behind', 'next'])
    expect(await waiting()).toEqual([])
  })

  it("merges a killed writer's filled slot with the next append and empties it; a killed writer's old empty slot goes", async () => {
    const left = createEntry({ from: 'bob', text: 'left in a slot' })
    const filled = await orphanSlot(slotContent('000000000000001-0000000001-000000000000', left), 1_000)
    const abandoned = await orphanSlot('', 11 * 60_000, DEAD_PID, 'old')
    const recent = await orphanSlot('', 30_000, DEAD_PID, 'recent') // its writer might be between two appends
    // A live writer closes its idle slot after 2 s: one untouched for minutes is left over, whatever its pid says (pids are reused).
    const stale = await orphanSlot('', 11 * 60_000, process.pid, 'live')
    await appendMessage(file, { from: 'alice', text: 'next' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['left in a slot', 'next'])
    expect(await fs.readFile(filled, 'utf8')).toBe('')
    const names = await spoolNames()
    expect(names).not.toContain(path.basename(abandoned))
    expect(names).not.toContain(path.basename(stale))
    expect(names).toEqual(expect.arrayContaining([path.basename(filled), path.basename(recent)]))
    expect(await waiting()).toEqual([])
  })

  it('a merger that stalled past the stale time never empties a slot refilled since (its writer would take it as sent)', async () => {
    const entry = createEntry({ from: 'bob', text: 'next batch' })
    const refilled = await orphanSlot(slotContent('000000000000002-0000000001-000000000001', entry), 0, process.pid, 'refilled')
    clearSpooled([{ file: refilled, slot: true, key: '000000000000001-0000000001-000000000000' }])
    expect(JSON.parse(await fs.readFile(refilled, 'utf8')).entries).toEqual([entry])
    clearSpooled([{ file: refilled, slot: true, key: '000000000000002-0000000001-000000000001' }])
    expect(await fs.readFile(refilled, 'utf8')).toBe('')
  })

  it('an append to an inbox nobody else is writing takes the lock at once and leaves no slot', async () => {
    await appendMessage(file, { from: 'alice', text: 'only' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['only'])
    expect((await spoolNames()).filter((n) => n.endsWith('.slot'))).toEqual([])
    await appendContended(file, 'contended')
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['only', 'contended'])
    expect((await spoolNames()).filter((n) => n.endsWith('.slot'))).toHaveLength(1)
  })

  it('never fills a slot that still holds an earlier batch: that batch stays queued and is merged too', async () => {
    await appendContended(file, 'first')
    const [own] = (await spoolNames()).filter((n) => n.startsWith(`${process.pid}-`) && n.endsWith('.slot'))
    const leftover = createEntry({ from: 'alice', text: 'left in my slot' })
    await fs.writeFile(path.join(spoolDir(file), own), slotContent('000000000000001-0000000001-000000000000', leftover))
    await appendMessage(file, { from: 'alice', text: 'second' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['first', 'left in my slot', 'second'])
  })

  it("sweeps a killed merger's old temp inbox, not a young one", async () => {
    await fs.mkdir(spoolDir(file), { recursive: true })
    const old = path.join(spoolDir(file), '.lead.json.123.abcd.0.tmp')
    const young = path.join(spoolDir(file), '.lead.json.123.abcd.1.tmp')
    await fs.writeFile(old, '[]')
    await fs.writeFile(young, '[]')
    const when = new Date(Date.now() - 5 * 60_000)
    await fs.utimes(old, when, when)
    await appendMessage(file, { from: 'alice', text: 'x' })
    const names = await spoolNames()
    expect(names).not.toContain(path.basename(old))
    expect(names).toContain(path.basename(young))
  })

  it('an append whose spool is deleted while it waits for the lock (the team deleted) rejects: it was not sent', async () => {
    await appendMessage(file, { from: 'alice', text: 'before' })
    await fs.mkdir(`${file}.lock`) // a foreign holder (Claude Code)
    try {
      const pending = appendMessage(file, { from: 'alice', text: 'lost cause' })
      // Expected before the spool goes: the append may reject while fs.rm is still at work.
      const refused = expect(pending).rejects.toMatchObject({ code: 'SWARM_NOT_FOUND', message: expect.stringContaining('was not sent') })
      await new Promise((r) => setTimeout(r, 50))
      await fs.rm(spoolDir(file), { recursive: true, force: true })
      await refused
    } finally {
      await fs.rmdir(`${file}.lock`)
    }
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['before'])
  })

  it("reuses one slot for a writer's consecutive appends, and removes it when the writer exits", async () => {
    for (let i = 0; i < 5; i++) await appendContended(file, `m${i}`)
    const slots = (await spoolNames()).filter((n) => n.endsWith('.slot'))
    expect(slots).toHaveLength(1)
    expect(slots[0].startsWith(`${process.pid}-`)).toBe(true)
    expect(await fs.readFile(path.join(spoolDir(file), slots[0]), 'utf8')).toBe('') // emptied: sent
    await runNode([WRITER, 'append', file, 'w', '20'])
    expect((await readInbox(file)).length).toBe(25)
    // The child's slot is gone with it; ours stays until it has been idle a while.
    expect((await spoolNames()).filter((n) => n.endsWith('.slot'))).toEqual(slots)
  })

  it('leaves a young half-written slot for later and moves an old torn one aside, keeping its bytes', async () => {
    const young = await orphanSlot('{"key":"k","entries":[{"from":"bob","te', 0, DEAD_PID, 'young')
    await orphanSlot('{"key":"k","entries":[{"from":"bob","text":"to', 60_000, DEAD_PID, 'torn')
    const reported: CorruptFileError[] = []
    await appendMessages(file, [{ from: 'alice', text: 'hello' }], { onCorrupt: (e) => reported.push(e) })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['hello'])
    expect(reported).toHaveLength(1)
    expect(await fs.readFile(reported[0].movedTo!, 'utf8')).toBe('{"key":"k","entries":[{"from":"bob","text":"to')
    expect(await spoolNames()).toContain(path.basename(young))
  })

  it("a watcher's safety poll merges and delivers orphaned entries (slot or one-shot file) when nobody else writes", async () => {
    const got: InboxMessage[] = []
    const watcher = watchInbox('alpha', 'lead', (batch) => void got.push(...batch), { env: home.env, pollMs: 50 })
    try {
      await watcher.ready
      await orphan(JSON.stringify([createEntry({ from: 'bob', text: 'orphan' })]), 5_000)
      await orphanSlot(slotContent('000000000000002-0000000001-000000000000', createEntry({ from: 'bob', text: 'in a slot' })), 5_000)
      await waitFor('both orphans delivered', () => got.length === 2)
      expect(got.map((m) => m.text).sort()).toEqual(['in a slot', 'orphan'])
      expect(await waiting()).toEqual([])
    } finally {
      await watcher.close()
    }
  })

  it('leaves a young half-written one-shot file for later and moves an old torn one aside, keeping its bytes', async () => {
    const young = await orphan('[{"from":"bob","te', 0, 'young')
    await orphan('[{"from":"bob","text":"to', 60_000, 'old')
    const empty = await orphan('', 60_000, 'empty') // killed between create and write: nothing to keep
    const reported: CorruptFileError[] = []
    await appendMessages(file, [{ from: 'alice', text: 'hello' }], { onCorrupt: (e) => reported.push(e) })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['hello'])
    expect(reported).toHaveLength(1)
    expect(await fs.readFile(reported[0].movedTo!, 'utf8')).toBe('[{"from":"bob","text":"to')
    const names = await spoolNames()
    expect(names).toContain(path.basename(young))
    expect(names).not.toContain(path.basename(empty))
    expect(names.filter((n) => n.includes('.corrupt-'))).toHaveLength(1)
    // The moved-aside file is never picked up again.
    await appendMessage(file, { from: 'alice', text: 'again' }, { onCorrupt: (e) => reported.push(e) })
    expect(reported).toHaveLength(1)
  })
})
