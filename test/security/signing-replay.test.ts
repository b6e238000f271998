import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { inboxPath, LEAD_NAME } from '../../src/home/paths.js'
import { appendMessage } from '../../src/mailbox/inbox.js'
import { encodeStructured, parseStructured } from '../../src/mailbox/messages.js'
import { orderLedgerPath } from '../../src/trust/ledger.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { makeFixture, startAgent, TEAM, inbox, type Fixture, type TestAgent } from '../agent/runtime/helpers.js'
import fs from 'node:fs/promises'
import { PassThrough } from 'node:stream'
import { LeaderConsole, type TeamControl } from '../../src/leader/console.js'
import { useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import path from 'node:path'
import { pathWithoutBwrap } from './sandbox-helpers.js'

/**
 * A signed lead order, copied out of one teammate's inbox (as a process that can read it would),
 * is refused by another teammate (the signature names its recipient) and by the same teammate a
 * second time — also after a restart (the ledger of acted-on ids is on disk) — in every mode.
 */

const MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'bubble'] as const

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }, { name: 'bob' }]), onReady: (t) => ({ loopback, fx } = t) })

async function start(name: string, mode: string): Promise<TestAgent> {
  const a = await startAgent(fx, name, { mode, runtime: { autoClaimTasks: false } })
  await waitFor(`${name} idle`, async () => (await readMemberState(TEAM, name, fx.env))?.status === 'idle', 10_000, { output: a.out })
  return a
}

const modeOf = async (name: string) => (await readMemberState(TEAM, name, fx.env))?.mode
const setMode = (mode: string) => encodeStructured({ type: 'mode_set_request', mode, from: LEAD_NAME })

/** The signed mode_set_request to `mode` as it sits in alice's inbox. */
async function signedOrder(mode: string): Promise<InboxMessage> {
  const found = (await inbox(fx, 'alice')).find((m) => {
    const s = parseStructured(m.text)
    return s?.type === 'mode_set_request' && s.mode === mode
  })
  expect(found?.leadSig).toBeTypeOf('string')
  return found!
}

/** The attacker's copy: the very fields the lead signed, with its signature. */
function replayOf(m: InboxMessage) {
  return { from: m.from, text: m.text, timestamp: m.timestamp, msg_id: m.msg_id!, leadSig: m.leadSig! }
}

/**
 * What an attacker with the inbox file does to replay to the same teammate: drops the read
 * original (the mailbox would ignore a second entry with its msg_id) and writes the copy, unread.
 */
async function plant(name: string, m: InboxMessage): Promise<void> {
  const file = inboxPath(TEAM, name, fx.env)
  const others = (await inbox(fx, name)).filter((e) => e.msg_id !== m.msg_id)
  await fs.writeFile(`${file}.attack`, JSON.stringify([...others, { ...replayOf(m), read: false, msgV: 1 }]))
  await fs.rename(`${file}.attack`, file)
}

describe.each(['bwrap present', 'bwrap absent'] as const)('a signed lead order cannot be replayed (%s)', (variant) => {
  for (const mode of MODES) {
    it(`${mode}: replayed to another teammate it is UNVERIFIED; replayed to the same one (also after a restart) it is REPLAYED`, async () => {
      if (variant === 'bwrap absent') fx.env.PATH = pathWithoutBwrap(path.join(fx.base, 'nobwrap'))
      const target = mode === 'plan' ? 'acceptEdits' : 'plan'
      const later = mode === 'dontAsk' ? 'default' : 'dontAsk'
      let alice = await start('alice', mode)
      const bob = await start('bob', mode)

      await sendTeamMessage({ team: TEAM, to: 'alice', text: setMode(target), env: fx.env })
      await waitFor(`alice in ${target}`, async () => (await modeOf('alice')) === target, 10_000, { output: alice.out })
      const order = await signedOrder(target)

      // To another teammate: the signature was made for alice.
      await appendMessage(inboxPath(TEAM, 'bob', fx.env), replayOf(order))
      await waitFor('bob to refuse the copy', () => /ignored mode_set_request from team-lead: UNVERIFIED/.test(bob.out()), 10_000, {
        output: bob.out,
      })
      expect(await modeOf('bob')).toBe(mode)

      // To alice again, in the same run: the copy comes before a newer order, and only the newer one counts.
      await plant('alice', order)
      await sendTeamMessage({ team: TEAM, to: 'alice', text: setMode(later), env: fx.env })
      await waitFor(`alice in ${later}`, async () => (await modeOf('alice')) === later, 10_000, { output: alice.out })
      expect(alice.out().split(`mode set to ${target} by team-lead`).length - 1).toBe(1)

      // After a restart: the copy planted while alice is down meets the ledger on disk (in the control plane).
      await alice.stop()
      expect(await fs.readFile(orderLedgerPath(TEAM, 'alice', fx.env), 'utf8')).toContain(order.msg_id!)
      await plant('alice', order)
      alice = await start('alice', later)
      await waitFor('the restarted alice to refuse the replay', () => /ignored mode_set_request from team-lead: REPLAYED/.test(alice.out()), 10_000, {
        output: alice.out,
      })
      expect(await modeOf('alice')).toBe(later)
      expect(alice.out()).not.toContain(`mode set to ${target}`)
    })
  }
})

describe('a signed spawn request cannot be replayed to the leader', () => {
  /** A leader console on streams (a restart is a new one), its spawns recorded. */
  function openLeader(spawned: string[]) {
    const input = new PassThrough()
    const output = new PassThrough()
    let text = ''
    output.on('data', (d) => (text += String(d)))
    const control: TeamControl = {
      spawn: async (name) => {
        spawned.push(name)
        return `started ${name}`
      },
      kill: async (name) => `stopped ${name}`,
      closed: async () => undefined,
      status: async () => 'status',
    }
    const done = new LeaderConsole({ team: TEAM, env: fx.env, input, output, control, color: false, pendingPollMs: 100 }).run()
    return {
      text: () => text,
      close: () => {
        input.end()
        return done
      },
    }
  }

  it('the console honours it once; a copy planted for the restarted leader is REPLAYED and starts nothing', async () => {
    const spawned: string[] = []
    const first = openLeader(spawned)
    await waitFor('the console', () => first.text().includes('swarm leader'))
    const request = { type: 'spawn_request' as const, requestId: 'sp-1', from: LEAD_NAME, name: 'carol', timestamp: new Date().toISOString() }
    const [sent] = await sendTeamMessage({ team: TEAM, to: LEAD_NAME, text: encodeStructured(request), env: fx.env })
    await waitFor('carol started', () => first.text().includes('started carol'), 10_000, { output: first.text })
    await first.close()
    await plant(LEAD_NAME, sent!)
    const second = openLeader(spawned)
    try {
      await waitFor('the replay refused', () => second.text().includes('ignored a REPLAYED spawn request for carol'), 10_000, { output: second.text })
      expect(spawned).toEqual(['carol'])
    } finally {
      await second.close()
    }
  })
})
