import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { inboxPath } from '../../src/home/paths.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { encodeStructured, parseStructured } from '../../src/mailbox/messages.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { appendMessage } from '../../src/mailbox/inbox.js'
import { loadLeadPrivateKey } from '../../src/trust/keys.js'
import { leadSigner, signEntry } from '../../src/trust/sign.js'
import { fakeAdapter, submissions } from '../adapters/fake-cli.js'
import { type AgentTeam, agentState, agentTeam } from '../agents/helpers.js'
import { hasTmux } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'

/**
 * An agent-CLI teammate's courier goes through the same lead-order gate as swarm's agent: a signed
 * shutdown_request it obeyed, planted again for the respawned teammate, is REPLAYED (its ledger is
 * on disk) and the CLI keeps running; a fresh one still stops it. One signed for another teammate
 * and copied into its inbox is UNVERIFIED; after `swarm team rekey` one signed with the old key is
 * UNVERIFIED, one with the new key counts.
 */

const shutdown = (n: number) =>
  encodeStructured({ type: 'shutdown_request', requestId: `shutdown-${Date.now()}-${n}@fay`, from: 'team-lead', timestamp: new Date().toISOString() })

describe.skipIf(!hasTmux)("lead orders at an agent CLI's courier", () => {
  let t: AgentTeam
  afterEach(async () => t?.cleanup(), 30_000)

  it('a signed shutdown_request replayed to the respawned CLI teammate is REPLAYED; it keeps running', async () => {
    const fay = await startFay()

    await sendTeamMessage({ team: 't', to: 'fay', text: shutdown(1), env: t.env })
    await waitFor('fay to obey the shutdown', async () => (await agentState(t, 'fay'))?.status === 'exited', 20_000)
    const file = inboxPath('t', 'fay', t.env)
    const order = (await readInbox(file)).find((m) => parseStructured(m.text)?.type === 'shutdown_request')
    expect(order?.leadSig).toBeTypeOf('string')

    // The attacker's copy, unread, for the next run (the mailbox keeps one entry per msg_id).
    const copy: InboxMessage = {
      from: order!.from,
      text: order!.text,
      timestamp: order!.timestamp,
      msg_id: order!.msg_id,
      leadSig: order!.leadSig,
      read: false,
    }
    const others = (await readInbox(file)).filter((m) => m.msg_id !== order!.msg_id)
    await fs.writeFile(`${file}.attack`, JSON.stringify([...others, copy]))
    await fs.rename(`${file}.attack`, file)

    // A teammate that obeyed a shutdown counts as stopped on purpose: it is started again by name.
    const again = await t.swarm(['spawn', 't', 'fay', '--agent', 'fake', '--backend', 'tmux'])
    expect(again.code, again.stderr).toBe(0)
    await refusedAndStillRunning(fay, 'REPLAYED')

    // A fresh signed order still counts.
    await sendTeamMessage({ team: 't', to: 'fay', text: shutdown(2), env: t.env })
    await waitFor('fay to obey the fresh shutdown', async () => (await agentState(t, 'fay'))?.status === 'exited', 20_000)
  }, 90_000)

  /** fay (a fake CLI behind the courier) running and past her first prompt; her courier's log. */
  async function startFay(): Promise<{ log: string; courierLog: () => string }> {
    t = await agentTeam()
    const log = await fakeAdapter(t)
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'fake', '--backend', 'tmux', '--prompt', 'first: hello'])
    expect(spawned.stderr).toBe('')
    await waitFor('the first prompt', async () => (await submissions(log)).some((s) => s.includes('first: hello')), 30_000)
    const courierLog = () => {
      try {
        return readFileSync(path.join(t.home, 'teams', 't', 'agents', 'fay', 'courier.log'), 'utf8')
      } catch {
        return '' // not written yet
      }
    }
    return { log, courierLog }
  }

  /** The courier refused an order as `kind`, and fay still takes the next message. */
  async function refusedAndStillRunning(fay: { log: string; courierLog: () => string }, kind: 'REPLAYED' | 'UNVERIFIED'): Promise<void> {
    const output = fay.courierLog
    await waitFor(
      `the courier to refuse the order (${kind})`,
      async () => output().includes(`ignored shutdown_request from team-lead: ${kind}`),
      30_000,
      { output },
    )
    await sendTeamMessage({ team: 't', to: 'fay', text: 'still there?', env: t.env })
    await waitFor('the next message submitted', async () => (await submissions(fay.log)).some((p) => p.includes('still there?')), 30_000, { output })
    expect((await agentState(t, 'fay'))?.status).not.toBe('exited')
  }

  /** A shutdown_request signed with the team's current key for `recipient`, as the lead's seal makes it. */
  async function signedShutdown(recipient: string, n: number): Promise<InboxMessage> {
    const key = await loadLeadPrivateKey('t', t.env)
    return signEntry(createEntry({ from: 'team-lead', text: shutdown(n) }), leadSigner(key), recipient)
  }

  it("a signed shutdown_request copied from another teammate's inbox is UNVERIFIED; the CLI keeps running", async () => {
    const fay = await startFay()
    await appendMessage(inboxPath('t', 'fay', t.env), await signedShutdown('gus', 3)) // gus's order, in fay's inbox
    await refusedAndStillRunning(fay, 'UNVERIFIED')
  }, 90_000)

  it('after swarm team rekey, a shutdown_request signed with the old key is UNVERIFIED; one with the new key stops the CLI', async () => {
    const { log, courierLog } = await startFay()
    const stale = await signedShutdown('fay', 4) // signed now, before the rekey
    const rekey = await t.swarm(['team', 'rekey', 't'])
    expect(rekey.code, rekey.stderr).toBe(0)
    // The courier learns the new key (or fay is restarted on it): a message after the rekey is taken.
    await sendTeamMessage({ team: 't', to: 'fay', text: 'after the rekey', env: t.env })
    await waitFor('a message after the rekey', async () => (await submissions(log)).some((p) => p.includes('after the rekey')), 30_000, {
      output: courierLog,
    })
    await appendMessage(inboxPath('t', 'fay', t.env), stale)
    await waitFor(
      'the courier to refuse the old key',
      async () => courierLog().includes('ignored shutdown_request from team-lead: UNVERIFIED'),
      30_000,
      {
        output: courierLog,
      },
    )
    expect((await agentState(t, 'fay'))?.status).not.toBe('exited')
    await appendMessage(inboxPath('t', 'fay', t.env), await signedShutdown('fay', 5))
    await waitFor('fay to obey the order signed with the new key', async () => (await agentState(t, 'fay'))?.status === 'exited', 20_000, {
      output: courierLog,
    })
  }, 90_000)
})
