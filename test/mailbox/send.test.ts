import { generateKeyPairSync } from 'node:crypto'
import fs from 'node:fs/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InvalidNameError, NotFoundError, SwarmError } from '../../src/errors.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { addressMessage, deliverAddressed, resolveRecipients, type MessageOptions } from '../../src/mailbox/send.js'
import { leadSigner, seal } from '../../src/trust/sign.js'
import { MAX_MESSAGE_BYTES } from '../../src/mailbox/types.js'
import { inboxPath, inboxesDir } from '../../src/home/paths.js'
import { tempHome } from './helpers.js'

const members = ['team-lead', 'alice', 'bob']

describe('resolveRecipients', () => {
  it('resolves a member by name, even the sender itself', () => {
    expect(resolveRecipients(members, 'bob', 'alice')).toEqual(['bob'])
    expect(resolveRecipients(members, 'alice', 'alice')).toEqual(['alice'])
  })

  it('resolves * to every member but the sender', () => {
    expect(resolveRecipients(members, '*', 'alice')).toEqual(['team-lead', 'bob'])
    expect(resolveRecipients(['solo'], '*', 'solo')).toEqual([])
  })

  it('refuses a non-member (exit 3) and an invalid name (exit 2)', () => {
    expect(() => resolveRecipients(members, 'carol', 'alice')).toThrow(NotFoundError)
    const err = (() => {
      try {
        resolveRecipients(members, 'carol', 'alice')
      } catch (e) {
        return e as NotFoundError
      }
    })()
    expect(err?.exitCode).toBe(3)
    expect(err?.hint).toContain('members: team-lead, alice, bob')
    expect(() => resolveRecipients(members, '../etc', 'alice')).toThrow(InvalidNameError)
  })
})

/** A teammate's message, as teams/messaging sends one: addressed, sealed (unsigned), delivered. */
const deliver = async (o: MessageOptions & { team: string; env: NodeJS.ProcessEnv }) =>
  await deliverAddressed(o.team, seal(addressMessage(o), 'teammate'), o.env)

describe('deliver', () => {
  let home: Awaited<ReturnType<typeof tempHome>>
  beforeEach(async () => (home = await tempHome()))
  afterEach(() => home.cleanup())

  it('writes one entry per recipient with its own msg_id', async () => {
    const sent = await deliver({ team: 'alpha', members, from: 'alice', to: '*', text: 'hi all', summary: 'hi', color: 'green', env: home.env })
    expect(sent).toHaveLength(2)
    expect(new Set(sent.map((m) => m.msg_id)).size).toBe(2)
    expect(await readInbox(inboxPath('alpha', 'team-lead', home.env))).toEqual([sent[0]])
    expect(await readInbox(inboxPath('alpha', 'bob', home.env))).toEqual([sent[1]])
    expect(await readInbox(inboxPath('alpha', 'alice', home.env))).toEqual([])
    expect(sent[0]).toMatchObject({ from: 'alice', text: 'hi all', summary: 'hi', color: 'green', read: false })
  })

  it('writes addressed entries as given: what the author signed is what the inbox holds', async () => {
    const addressed = addressMessage({ members, from: 'team-lead', to: 'bob', text: 'order' })
    const sign = leadSigner(generateKeyPairSync('ed25519').privateKey)
    const [entry] = await deliverAddressed('alpha', seal(addressed, sign), home.env)
    expect(entry.leadSig).toMatch(/.+/)
    expect(entry.lead_sig).toMatch(/.+/)
    expect((await readInbox(inboxPath('alpha', 'bob', home.env)))[0]).toEqual(entry)
  })

  it('refuses to seal a team-lead entry without a signer (outside a Claude Code-led team), before anything is written', async () => {
    const addressed = addressMessage({ members, from: 'team-lead', to: '*', text: 'order' })
    expect(() => seal(addressed, 'teammate')).toThrow(/must be signed/)
    expect(seal(addressed, 'claude-lead').map((a) => a.entry.leadSig)).toEqual([undefined, undefined])
    await expect(fs.access(inboxesDir('alpha', home.env))).rejects.toThrow()
  })

  it('creates no file for a non-member and writes nothing for an oversized broadcast', async () => {
    await expect(deliver({ team: 'alpha', members, from: 'alice', to: 'carol', text: 'x', env: home.env })).rejects.toBeInstanceOf(NotFoundError)
    const big = 'x'.repeat(MAX_MESSAGE_BYTES + 1)
    await expect(deliver({ team: 'alpha', members, from: 'alice', to: '*', text: big, env: home.env })).rejects.toBeInstanceOf(SwarmError)
    await expect(fs.access(inboxesDir('alpha', home.env))).rejects.toThrow()
  })
})
