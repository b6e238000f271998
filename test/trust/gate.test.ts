import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createEntry } from '../../src/mailbox/entry.js'
import { encodeStructured, parseStructured, type StructuredMessage } from '../../src/mailbox/messages.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { signClaudeLeadEntry } from '../../src/trust/claude-scheme.js'
import { isLeadOrder, LeadGate } from '../../src/trust/gate.js'
import { ensureTeamKeys, loadLeadPrivateKey } from '../../src/trust/keys.js'
import { claudeVerifyKeyFor, leadSigner, signEntry } from '../../src/trust/sign.js'
import { useTempDir } from '../support/home.js'

/**
 * The one gate every inbox consumer calls: an order counts once, only when signed for this
 * member, in a scheme it accepts; `lead_sig` only with a key the member was started with; a key
 * update revokes the old key in both schemes.
 */

let env: NodeJS.ProcessEnv
useTempDir('swarm-gate-', (d) => (env = { SWARM_HOME: d }))

const budget = (): StructuredMessage => ({
  type: 'budget_update',
  from: 'team-lead',
  addUsd: 5,
  scope: 'member',
  timestamp: new Date().toISOString(),
})
const order = (text = encodeStructured(budget()), from = 'team-lead') => createEntry({ from, text })
const signed = (key: KeyObject, to: string, e: InboxMessage = order()) => signEntry(e, leadSigner(key), to)

async function teamKey(): Promise<KeyObject> {
  await ensureTeamKeys('t', env)
  return loadLeadPrivateKey('t', env)
}

describe('the lead gate', () => {
  it('verifies an order signed for this member once; a copy, another recipient, a forged sender are refused', async () => {
    const key = await teamKey()
    const gate = await LeadGate.open({ team: 't', name: 'w1', env })
    const o = signed(key, 'w1')
    expect(await gate.acceptLeadOrder(o)).toBe('verified')
    expect(await gate.acceptLeadOrder(o)).toBe('replayed')
    expect(await (await LeadGate.open({ team: 't', name: 'w1', env })).acceptLeadOrder(o)).toBe('replayed') // the ledger is on disk
    expect(await (await LeadGate.open({ team: 't', name: 'w2', env })).acceptLeadOrder(o)).toBe('unverified')
    expect(await gate.acceptLeadOrder({ ...signed(key, 'w1'), from: 'w2' })).toBe('not-lead')
    expect(await gate.acceptLeadOrder(order())).toBe('unverified')
  })

  it("refuses a lead_sig made with the team's own key, or for another member, unless started with that member's key", async () => {
    const key = await teamKey()
    const { leadSig: _s, ...claudeOnly } = signed(key, 'w1')
    const bare = order()
    const teamKeyed = { ...bare, lead_sig: signClaudeLeadEntry(key, { ...bare, msg_id: bare.msg_id! }) }
    const plain = await LeadGate.open({ team: 't', name: 'w1', env })
    expect(await plain.acceptLeadOrder(claudeOnly)).toBe('unverified')
    expect(await plain.acceptLeadOrder(teamKeyed)).toBe('unverified')
    const started = await LeadGate.open({ team: 't', name: 'w1', env, claudeVerifyKey: claudeVerifyKeyFor(key, 'w1') })
    expect(await started.acceptLeadOrder(claudeOnly)).toBe('verified')
    const w2 = await LeadGate.open({ team: 't', name: 'w2', env, claudeVerifyKey: claudeVerifyKeyFor(key, 'w2') })
    const { leadSig: _t, ...forW1 } = signed(key, 'w1')
    expect(await w2.acceptLeadOrder(forW1)).toBe('unverified')
  })

  it('a verified lead_key_update revokes the old key in both schemes and brings in the new ones', async () => {
    const old = await teamKey()
    const next = generateKeyPairSync('ed25519').privateKey
    const gate = await LeadGate.open({ team: 't', name: 'w1', env, claudeVerifyKey: claudeVerifyKeyFor(old, 'w1') })
    const update = encodeStructured({
      type: 'lead_key_update',
      from: 'team-lead',
      publicKey: leadPublic(next),
      leadVerifyKey: claudeVerifyKeyFor(next, 'w1'),
      timestamp: new Date().toISOString(),
    })
    expect(await gate.acceptLeadOrder(signed(old, 'w1', order(update)))).toBe('verified')
    const { lead_sig: _a, ...swarmOld } = signed(old, 'w1')
    const { leadSig: _b, ...claudeOld } = signed(old, 'w1')
    expect(await gate.acceptLeadOrder(swarmOld)).toBe('unverified')
    expect(await gate.acceptLeadOrder(claudeOld)).toBe('unverified')
    const { lead_sig: _c, ...swarmNew } = signed(next, 'w1')
    const { leadSig: _d, ...claudeNew } = signed(next, 'w1')
    expect(await gate.acceptLeadOrder(swarmNew)).toBe('verified')
    expect(await gate.acceptLeadOrder(claudeNew)).toBe('verified')
  })

  it('an update without a Claude-format key leaves no lead_sig counting', async () => {
    const old = await teamKey()
    const next = generateKeyPairSync('ed25519').privateKey
    const gate = await LeadGate.open({ team: 't', name: 'w1', env, claudeVerifyKey: claudeVerifyKeyFor(old, 'w1') })
    const update = encodeStructured({ type: 'lead_key_update', from: 'team-lead', publicKey: leadPublic(next), timestamp: new Date().toISOString() })
    expect(await gate.acceptLeadOrder(signed(old, 'w1', order(update)))).toBe('verified')
    const { leadSig: _b, ...claudeNew } = signed(next, 'w1')
    expect(await gate.acceptLeadOrder(claudeNew)).toBe('unverified')
  })

  it("in a Claude Code lead's team, a member holding no key acts on the lead's unsigned orders (as Claude Code's keyless teammates do)", async () => {
    const keyless = await LeadGate.open({ team: 'cc', name: 'w1', env, claudeLed: true })
    expect(await keyless.acceptLeadOrder(order())).toBe('verified')
    const swarmLed = await LeadGate.open({ team: 'cc', name: 'w1', env })
    expect(await swarmLed.acceptLeadOrder(order())).toBe('unverified')
  })

  it('knows which messages are orders', () => {
    expect(isLeadOrder(parseStructured(encodeStructured(budget())))).toBe(true)
    expect(isLeadOrder(parseStructured(encodeStructured({ type: 'idle_notification', from: 'w1', timestamp: 't' })))).toBe(false)
    expect(isLeadOrder(parseStructured('hello'))).toBe(false)
  })
})

function leadPublic(key: KeyObject): string {
  return Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url').toString('base64')
}
