import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CorruptFileError } from '../../src/errors.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { appendMessage, appendMessages, readInbox } from '../../src/mailbox/inbox.js'
import { spoolDir } from '../../src/mailbox/spool.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { watchInbox } from '../../src/mailbox/watch.js'
import { inboxPath } from '../../src/teams/paths.js'
import { eventually, tempHome } from './helpers.js'

let home: Awaited<ReturnType<typeof tempHome>>
let file: string
beforeEach(async () => {
  home = await tempHome()
  file = inboxPath('alpha', 'lead', home.env)
})
afterEach(() => home.cleanup())

/** A spool file as a writer leaves it when it dies before merging: named `ageMs` ago. */
async function orphan(content: string, ageMs: number, tag = 'x'): Promise<string> {
  await fs.mkdir(spoolDir(file), { recursive: true })
  const name = `${String(Date.now() - ageMs).padStart(15, '0')}-99999-000000000-${tag}.json`
  const at = path.join(spoolDir(file), name)
  await fs.writeFile(at, content)
  return at
}

const spoolNames = async () => (await fs.readdir(spoolDir(file)).catch(() => [] as string[])).sort()

describe('append spool', () => {
  it('concurrent appends in one process all land exactly once and leave the spool empty', async () => {
    const sent = await Promise.all(Array.from({ length: 50 }, (_, i) => appendMessage(file, { from: 'alice', text: `m${i}` })))
    const inbox = await readInbox(file)
    expect(inbox).toHaveLength(50)
    expect(new Set(inbox.map((m) => m.msg_id))).toEqual(new Set(sent.map((m) => m.msg_id)))
    expect(await spoolNames()).toEqual([])
  })

  it("merges a dead writer's spooled entry with the next append, before it, without doubling one already merged", async () => {
    const first = await appendMessage(file, { from: 'alice', text: 'first' })
    const left = createEntry({ from: 'bob', text: 'left behind' })
    await orphan(JSON.stringify([left]), 5_000, 'a')
    // Killed between the inbox rename and the spool cleanup: already in the inbox.
    await orphan(JSON.stringify([first]), 4_000, 'b')
    await appendMessage(file, { from: 'alice', text: 'next' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['first', 'left behind', 'next'])
    expect(await spoolNames()).toEqual([])
  })

  it("a watcher's safety poll merges and delivers an orphaned entry when nobody else writes", async () => {
    const got: InboxMessage[] = []
    const watcher = watchInbox('alpha', 'lead', (batch) => void got.push(...batch), { env: home.env, pollMs: 50 })
    try {
      await watcher.ready
      await orphan(JSON.stringify([createEntry({ from: 'bob', text: 'orphan' })]), 5_000)
      await eventually(() => got.length === 1)
      expect(got[0].text).toBe('orphan')
      expect(await spoolNames()).toEqual([])
    } finally {
      await watcher.close()
    }
  })

  it('leaves a young half-written spool file for later and moves an old torn one aside, keeping its bytes', async () => {
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
