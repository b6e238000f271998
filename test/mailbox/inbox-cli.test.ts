import fs from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ARCHIVE_THRESHOLD } from '../../src/mailbox/archive.js'
import { appendMessage, appendMessages, markDelivered, markRead, readInbox } from '../../src/mailbox/inbox.js'
import { encodeStructured } from '../../src/mailbox/messages.js'
import { inboxPath, teamConfigPath } from '../../src/home/paths.js'
import { requireBuild, startNode, SWARM_BIN, type TempHome, useInbox } from './helpers.js'

let home: TempHome
let file: string
beforeAll(requireBuild)
useInbox('bob', async (t) => {
  ;({ home, file } = t)
  await writeTeam()
})

/** A config.json as Claude Code writes it (the team store is not needed to read one). */
async function writeTeam() {
  const member = (name: string, color?: string) => ({
    agentId: `${name}@alpha`,
    name,
    ...(color ? { color } : {}),
    joinedAt: 1767225600000,
    tmuxPaneId: name === 'team-lead' ? '' : '%1',
    cwd: '/tmp',
    subscriptions: [],
  })
  const team = {
    name: 'alpha',
    createdAt: 1767225600000,
    leadAgentId: 'team-lead@alpha',
    members: [member('team-lead'), member('alice', 'green'), member('bob', 'blue')],
  }
  const config = teamConfigPath('alpha', home.env)
  await fs.mkdir(path.dirname(config), { recursive: true })
  await fs.writeFile(config, JSON.stringify(team, null, 2))
}

async function swarm(...args: string[]): Promise<{ code: number | null; out: string }> {
  const proc = startNode([SWARM_BIN, ...args], home.env)
  const code = await proc.exited
  return { code, out: proc.output() }
}

describe('swarm inbox', () => {
  it('prints the history (archive first), each message with time, sender and text, unread marked', async () => {
    await appendMessages(
      file,
      Array.from({ length: ARCHIVE_THRESHOLD + 1 }, (_, i) => ({ from: 'alice', text: `old ${i}` })),
    )
    await markRead(file, 'all')
    await appendMessage(file, { from: 'alice', text: 'plain text' })
    await appendMessage(file, { from: 'team-lead', text: 'long text', summary: 'the summary' })
    const idle = { type: 'idle_notification' as const, from: 'alice', timestamp: new Date().toISOString(), idleReason: 'available' as const }
    await appendMessage(file, { from: 'alice', text: encodeStructured(idle) })
    const { code, out } = await swarm('inbox', 'alpha', 'bob')
    expect(code).toBe(0)
    const lines = out.trimEnd().split('\n')
    expect(lines).toHaveLength(ARCHIVE_THRESHOLD + 4)
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}alice {2}old 0$/)
    expect(lines.at(-3)).toMatch(/alice {2}plain text {2}\[sent\]$/)
    expect(lines.at(-2)).toMatch(/team-lead {2}the summary {2}\[sent\]$/)
    expect(lines.at(-1)).toMatch(/alice {2}\[idle_notification\] alice is idle \(available\) {2}\[sent\]$/)
  })

  it('--json shows each message with its state; --unread --mark-read marks what it showed', async () => {
    const [a, b, c] = await appendMessages(
      file,
      [1, 2, 3].map((i) => ({ from: 'alice', text: `m${i}` })),
    )
    await markDelivered(file, [b.msg_id!])
    await markRead(file, { msgIds: [a.msg_id!] })
    const all = JSON.parse((await swarm('inbox', 'alpha', 'bob', '--json')).out) as Array<{ msg_id: string; state: string; archived: boolean }>
    expect(all.map((m) => [m.msg_id, m.state, m.archived])).toEqual([
      [a.msg_id, 'read', false],
      [b.msg_id, 'delivered', false],
      [c.msg_id, 'sent', false],
    ])
    const unread = JSON.parse((await swarm('inbox', 'alpha', 'bob', '--unread', '--mark-read', '--json')).out) as Array<{ text: string }>
    expect(unread.map((m) => m.text)).toEqual(['m2', 'm3'])
    expect((await readInbox(file)).every((m) => m.read === true)).toBe(true)
    expect((await swarm('inbox', 'alpha', 'bob', '--unread')).out).toBe('no unread messages for bob\n')
  })

  it('refuses bad input with the documented exit codes, naming the problem', async () => {
    const invalid = await swarm('inbox', 'alpha', '../x')
    expect(invalid.code).toBe(2)
    expect(invalid.out).toMatch(/^swarm: invalid agent name/)
    const stranger = await swarm('inbox', 'alpha', 'carol')
    expect(stranger.code).toBe(3)
    expect(stranger.out).toContain('no member named "carol" in team "alpha"')
    await expect(fs.access(inboxPath('alpha', 'carol', home.env))).rejects.toThrow()
    expect((await swarm('inbox', 'nope', 'bob')).code).toBe(3)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, '{broken')
    const corrupt = await swarm('inbox', 'alpha', 'bob')
    expect(corrupt.code).toBe(5)
    expect(corrupt.out).toContain(file)
    expect(await fs.readFile(file, 'utf8')).toBe('{broken')
  })

  it('--follow prints messages as they arrive and exits 0 on SIGINT', async () => {
    await appendMessage(file, { from: 'alice', text: 'already here' })
    const proc = startNode([SWARM_BIN, 'inbox', 'alpha', 'bob', '--follow', '--json'], home.env)
    await proc.waitForLine('already here')
    await appendMessage(file, { from: 'team-lead', text: 'arrived later' })
    await proc.waitForLine('arrived later')
    proc.child.kill('SIGINT')
    expect(await proc.exited).toBe(0)
    const rows = proc
      .output()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { text: string; state: string })
    expect(rows.map((r) => r.text)).toEqual(['already here', 'arrived later'])
  })
})
