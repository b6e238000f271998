import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readPending, readResolved, resolveRequest, writePending } from '../../src/asks/store.js'
import { mirrorRoster } from '../../src/cli/remote-host.js'
import { inboxPath } from '../../src/home/paths.js'
import { appendMessage, readInbox } from '../../src/mailbox/inbox.js'
import { Journal } from '../../src/remote/journal.js'
import { RelayPeer } from '../../src/remote/peer.js'
import type { RelayItem } from '../../src/remote/protocol.js'
import { runRelay } from '../../src/remote/relay.js'
import { swarmVersion } from '../../src/remote/version.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { addMember } from '../../src/teams/team-store.js'
import { launchRecordCheck, leadRecordSeal } from '../../src/teams/lead-records.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { ensureTeamKeys, loadLeadPublicKey, writeLeadPublicKey } from '../../src/trust/keys.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'
import { waitFor } from '../support/wait.js'

/**
 * The host's end of the relay (`swarm remote relay`) against a real link-side peer over a pair of
 * streams, on a real mirror team: what the link sends a member started here stays in its inbox
 * there, unread — even when it arrives while the member's spawn is still under way — and what a
 * resident writes for someone elsewhere comes back.
 */

const TEAM = 'mirror-t'
let h: IsolatedHome
/** The lead's machine: the team itself, its key, the prompt as the lead sends it. */
let lead: IsolatedHome
let stop: AbortController
let received: RelayItem[]
let failures: string[]
let link: RelayPeer
let relayEnded: Promise<string>
let relayWhy: string | undefined

beforeEach(async () => {
  h = isolatedHome()
  lead = isolatedHome()
  await createTeam({ name: TEAM, cwd: lead.project }, lead.env)
  await ensureTeamKeys(TEAM, lead.env)
  await addMember(TEAM, { name: 'alice' }, lead.env)
  await createTeam({ name: TEAM, cwd: h.project }, h.env)
  await writeLeadPublicKey(TEAM, await loadLeadPublicKey(TEAM, lead.env), h.env)
  stop = new AbortController()
  received = []
  failures = []
  const toRelay = new PassThrough()
  const toLink = new PassThrough()
  relayWhy = undefined
  relayEnded = runRelay(TEAM, { input: toRelay, write: (t) => toLink.write(t), signal: stop.signal }, h.env, 'link-1')
  void relayEnded.then((why) => (relayWhy = why))
  link = new RelayPeer(
    {
      team: TEAM,
      version: swarmVersion(),
      journal: await Journal.open(path.join(h.base, 'link-journal')),
      onFailure: (why) => failures.push(why),
      apply: async (item) => {
        received.push(item)
      },
    },
    (t) => toRelay.write(t),
  )
  toLink.on('data', link.reader())
  link.start()
})

afterEach(async () => {
  stop.abort()
  await relayEnded
  await h.cleanup()
  await lead.cleanup()
})

const entry = (from: string, text: string, msgId: string) => ({ from, text, timestamp: new Date().toISOString(), msg_id: msgId })

describe('the relay on a host', () => {
  it("keeps a member's first prompt, relayed while its spawn is under way, unread in its inbox there, never sent back", async () => {
    // What `swarm remote spawn` writes before any pane starts: alice to start here, bob elsewhere.
    await mirrorRoster(TEAM, ['team-lead', 'alice', 'bob'], ['alice'], h.env)
    const members = (await readTeam(TEAM, h.env)).members
    expect(members.find((m) => m.name === 'alice')?.elsewhere).toBeUndefined()
    expect(members.find((m) => m.name === 'bob')?.elsewhere).toBe(true)
    const [prompt] = await sendTeamMessage({ team: TEAM, to: 'alice', text: 'run the tests', summary: 'initial prompt', env: lead.env })
    await link.post({ kind: 'entry', to: 'alice', entry: prompt! })
    const file = inboxPath(TEAM, 'alice', h.env)
    const arrived = async () => (await readInbox(file)).find((m) => m.msg_id === prompt!.msg_id)
    await waitFor('the prompt in alice’s inbox on the host', arrived, 5_000, {
      output: () => [...failures, `relay: ${relayWhy ?? 'running'}`].join('\n'),
    })
    // Several of the relay's scans (every 250 ms, and on each inbox change) pass.
    await new Promise((r) => setTimeout(r, 1_000))
    expect((await arrived())?.read).toBe(false)
    expect(received).toEqual([])
    expect(failures).toEqual([])
  })

  it('relays out what a resident writes for one who lives elsewhere, and marks it read there', async () => {
    await mirrorRoster(TEAM, ['team-lead', 'alice', 'bob'], ['alice'], h.env)
    const bobs = inboxPath(TEAM, 'bob', h.env)
    await appendMessage(bobs, entry('alice', 'hello bob', 'm-2'))
    await waitFor('the entry for bob at the link', () => received.some((i) => i.kind === 'entry' && i.to === 'bob'), 5_000)
    await waitFor('it read on the host', async () => (await readInbox(bobs))[0]?.read === true, 5_000)
  })

  it('refuses, unacked, an entry for a member who lives elsewhere: the link keeps it to resend', async () => {
    await mirrorRoster(TEAM, ['team-lead', 'alice', 'bob'], ['alice'], h.env)
    await link.post({ kind: 'entry', to: 'bob', entry: entry('team-lead', 'for bob', 'm-3') })
    expect(await relayEnded).toMatch(/bob is not on this host yet/)
    expect(await readInbox(inboxPath(TEAM, 'bob', h.env))).toEqual([])
  })

  it('8 spawns on one host at once: none fails on another one having added a member, every member placed here is resident', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `m${i}`)
    await Promise.all(names.map((_n, i) => mirrorRoster(TEAM, ['team-lead', 'bob', ...names.slice(0, i + 1)], names, h.env)))
    const members = (await readTeam(TEAM, h.env)).members
    for (const n of names) expect(members.find((m) => m.name === n)?.elsewhere, n).toBeUndefined()
    expect(members.find((m) => m.name === 'bob')?.elsewhere).toBe(true)
  })

  it("records the lead's answer as the lead sealed it: the check of a member's hook there verifies it", async () => {
    await mirrorRoster(TEAM, ['team-lead', 'alice'], ['alice'], h.env)
    const request = {
      id: 'perm-relayed-1',
      kind: 'permission' as const,
      agent: 'alice',
      agentId: `alice@${TEAM}`,
      toolName: 'Bash',
      toolUseId: 'call-1',
      input: { command: 'true' },
      description: 'true',
      createdAt: Date.now(),
    }
    // Asked on the host by alice's hook; pending on the lead's machine with the link standing in (remote/link.ts).
    await writePending(TEAM, { ...request, pid: process.pid }, h.env)
    await writePending(TEAM, { ...request, pid: process.pid, remoteHost: 'root@host', remotePid: process.pid }, lead.env)
    const seal = await leadRecordSeal(await readTeam(TEAM, lead.env), lead.env)
    const answer = await resolveRequest(TEAM, request.id, { decision: 'approve', resolvedBy: 'team-lead', seal }, lead.env)
    await link.post({ kind: 'resolved', request: answer })
    const there = await waitFor('the answer on the host', () => readResolved(TEAM, request.id, h.env), 5_000, {
      output: () => [...failures, `relay: ${relayWhy ?? 'running'}`].join('\n'),
    })
    expect(there).toEqual(answer)
    const check = await launchRecordCheck(await readTeam(TEAM, h.env), h.env)
    expect(await check!('resolved', there)).toBe(true)
    expect(await readPending(TEAM, request.id, h.env)).toBeUndefined()
  })

  it('a member spawned here after being listed as elsewhere loses the mark', async () => {
    await mirrorRoster(TEAM, ['team-lead', 'alice', 'bob'], ['alice'], h.env)
    await mirrorRoster(TEAM, ['team-lead', 'alice', 'bob'], ['bob'], h.env)
    const members = (await readTeam(TEAM, h.env)).members
    expect(members.find((m) => m.name === 'bob')?.elsewhere).toBeUndefined()
  })
})
