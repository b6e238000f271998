import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { writePending, readPending } from '../../src/asks/store.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'

const BIN = path.resolve(import.meta.dirname, '../../bin/swarm.js')
let h: IsolatedHome

beforeEach(async () => {
  h = isolatedHome('swarm-lead-only-')
  expect((await swarm(['team', 'create', 't', '--agents', 'bob,carol', '--no-start'])).code).toBe(0)
})
afterEach(() => h.cleanup())

/** Runs bin/swarm.js; `as` adds the variables a teammate's pane is started with. */
async function swarm(args: string[], as?: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await execa(process.execPath, [BIN, ...args], { env: { ...h.env, ...as }, cwd: h.project, reject: false, timeout: 20_000 })
  return { code: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) }
}

const BOB = { SWARM_TEAM: 't', SWARM_AGENT_NAME: 'bob', SWARM_AGENT_ID: 'bob@t' }

async function inbox(name: string): Promise<Array<{ from: string; text: string }>> {
  return JSON.parse(await fs.readFile(path.join(h.home, 'teams', 't', 'inboxes', `${name}.json`), 'utf8').catch(() => '[]'))
}

describe("a teammate's shell cannot speak or answer as the lead", () => {
  it('swarm send from a teammate sends as itself; --from naming anyone else is refused (exit 2)', async () => {
    for (const from of ['team-lead', 'carol']) {
      const r = await swarm(['send', 't', 'carol', `as ${from}`, '--from', from], BOB)
      expect(r.code).toBe(2)
      expect(r.stderr.trim().split('\n')).toEqual([`swarm: swarm send from bob's shell sends as bob, not as ${from} — leave out --from`])
    }
    expect(await inbox('carol')).toEqual([])
    expect((await swarm(['send', 't', 'team-lead', 'done: x'], BOB)).code).toBe(0)
    expect((await swarm(['send', 't', 'team-lead', 'me again', '--from', 'bob'], BOB)).code).toBe(0)
    // Only the agent id set (a process that lost SWARM_AGENT_NAME): still bob.
    expect((await swarm(['send', 't', 'carol', 'hi'], { SWARM_AGENT_ID: 'bob@t' })).code).toBe(0)
    expect((await inbox('team-lead')).map((m) => [m.from, m.text])).toEqual([
      ['bob', 'done: x'],
      ['bob', 'me again'],
    ])
    expect((await inbox('carol')).map((m) => m.from)).toEqual(['bob'])
    // The lead's shell (and the leader pane, named team-lead) still speaks as the lead.
    expect((await swarm(['send', 't', 'carol', 'order'], { SWARM_AGENT_NAME: 'team-lead' })).code).toBe(0)
    expect((await inbox('carol')).map((m) => m.from)).toEqual(['bob', 'team-lead'])
  })

  it('swarm tasks from a teammate acts as itself: its assignment names it, --from naming another member is refused (exit 2)', async () => {
    const added = await swarm(['tasks', 't', 'add', 'write docs', '--owner', 'carol', '--json'], BOB)
    expect(added.code, added.stderr).toBe(0)
    const assignment = (await inbox('carol')).map((m) => JSON.parse(m.text) as { type: string; assignedBy?: string })
    expect(assignment).toEqual([expect.objectContaining({ type: 'task_assignment', assignedBy: 'bob' })])
    const id = (JSON.parse(added.stdout) as { id: string }).id
    const as = await swarm(['tasks', 't', 'update', id, '--owner', 'bob', '--from', 'carol'], BOB)
    expect(as.code).toBe(2)
    expect(as.stderr.trim()).toBe("swarm: swarm tasks from bob's shell acts as bob, not as carol — leave out --from")
    expect((await swarm(['tasks', 't', 'complete', id], BOB)).code).toBe(0)
  })

  it('perms approve|deny, budget, compact, team rekey, spawn and kill are refused from a teammate (exit 4)', async () => {
    await writePending(
      't',
      {
        id: 'req-1',
        kind: 'permission',
        agent: 'carol',
        agentId: 'carol@t',
        toolName: 'Bash',
        toolUseId: 'tu1',
        input: { command: 'rm -rf build' },
        description: 'rm -rf build',
        createdAt: Date.now(),
      },
      h.env,
    )
    const refused = [
      ['perms', 'approve', 't', 'req-1'],
      ['perms', 'deny', 't', 'req-1'],
      ['budget', 't', 'bob', '--add', '5'],
      ['compact', 't', 'carol'],
      ['team', 'rekey', 't'],
      ['spawn', 't', 'dave', '--command', 'sleep 1'],
      ['kill', 't', 'carol', '--now'],
    ]
    for (const args of refused) {
      const r = await swarm(args, BOB)
      expect(r.code, args.join(' ')).toBe(4)
      expect(r.stderr.trim().split('\n'), args.join(' ')).toEqual([
        "swarm: only the lead answers permission requests or speaks as team-lead (this is bob's shell) — ask team-lead with swarm send",
      ])
    }
    expect(await readPending('t', 'req-1', h.env)).toMatchObject({ id: 'req-1' })
    const lead = await swarm(['perms', 'deny', 't', 'req-1'])
    expect(lead.code, lead.stderr).toBe(0)
    expect(await readPending('t', 'req-1', h.env)).toBeUndefined()
  })
})
