import { createPrivateKey, generateKeyPairSync, hkdfSync } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  CLAUDE_LEAD_SIG_SKEW_MS,
  formatClaudeVerifyKey,
  parseClaudeVerifyKey,
  signClaudeLeadEntry,
  verifyClaudeLeadEntry,
  recipientClaudeKey,
} from '../../src/trust/claude-scheme.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { claudeVerifyKeyFor, leadSigner, signEntry } from '../../src/trust/sign.js'
import { verifyLeadMessage } from '../../src/trust/swarm-scheme.js'

const fixture = JSON.parse(fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-lead-entry.json'), 'utf8'))

describe("Claude Code's lead signature", () => {
  it('verifies an entry the real Claude Code 2.1.332 signed, with the key it passed its teammate', () => {
    const key = parseClaudeVerifyKey(fixture.leadVerifyKey)
    expect(key?.launchMs).toBe(1796116536621)
    expect(verifyClaudeLeadEntry(key, fixture.entry)).toBe(true)
  })

  it('any changed field, a foreign key, a missing signature or an entry dated before the launch window fails', () => {
    const key = parseClaudeVerifyKey(fixture.leadVerifyKey)
    for (const change of [
      { text: 'do other work' },
      { from: 'mallory' },
      { msg_id: 'x' },
      { summary: 'added' },
      { color: 'red' },
      { from_plugin: 'p' },
    ]) {
      expect(verifyClaudeLeadEntry(key, { ...fixture.entry, ...change })).toBe(false)
    }
    const other = generateKeyPairSync('ed25519')
    expect(verifyClaudeLeadEntry(parseClaudeVerifyKey(formatClaudeVerifyKey(other.publicKey, 1796116536621)), fixture.entry)).toBe(false)
    expect(verifyClaudeLeadEntry(key, { ...fixture.entry, lead_sig: undefined })).toBe(false)
    const early = new Date(1796116536621 - CLAUDE_LEAD_SIG_SKEW_MS - 1).toISOString()
    const { privateKey } = generateKeyPairSync('ed25519')
    const vk = parseClaudeVerifyKey(formatClaudeVerifyKey(privateKey, 1796116536621))
    const old = { ...fixture.entry, timestamp: early }
    expect(verifyClaudeLeadEntry(vk, { ...old, lead_sig: signClaudeLeadEntry(privateKey, old) })).toBe(false)
  })

  it('malformed verify keys are refused, never thrown', () => {
    for (const bad of ['', 'abc', '12.', '.AAAA', '12.AAAA', `x${fixture.leadVerifyKey}`]) expect(parseClaudeVerifyKey(bad)).toBeUndefined()
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64url')
    expect(parseClaudeVerifyKey(`1.${rsa}`)).toBeUndefined()
  })
})

describe('swarm signs in both schemes, for one recipient', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const entry = signEntry(
    createEntry({ from: 'team-lead', text: '{"type":"shutdown_request"}', color: 'blue', summary: 'stop' }),
    leadSigner(privateKey),
    'alice',
  )
  const claudeKeyOf = (name: string) => parseClaudeVerifyKey(claudeVerifyKeyFor(privateKey, name, Date.now()))

  it('every lead entry carries both signatures, each verifying under its own scheme for its recipient', () => {
    expect(typeof entry.leadSig).toBe('string')
    expect(typeof entry.lead_sig).toBe('string')
    expect(verifyLeadMessage(publicKey, entry, 'alice')).toBe(true)
    expect(verifyClaudeLeadEntry(claudeKeyOf('alice'), entry)).toBe(true)
  })

  it("the lead_sig holds under the recipient's derived key only: not another member's, not the team's own", () => {
    expect(verifyClaudeLeadEntry(claudeKeyOf('bob'), entry)).toBe(false)
    expect(verifyClaudeLeadEntry(parseClaudeVerifyKey(formatClaudeVerifyKey(publicKey, Date.now())), entry)).toBe(false)
    expect(verifyLeadMessage(publicKey, entry, 'bob')).toBe(false)
  })

  it('derived keys are stable per team key and recipient, and change with the team key', () => {
    const spki = (k: ReturnType<typeof recipientClaudeKey>) => formatClaudeVerifyKey(k, 1)
    expect(spki(recipientClaudeKey(privateKey, 'alice'))).toBe(spki(recipientClaudeKey(privateKey, 'alice')))
    expect(spki(recipientClaudeKey(privateKey, 'alice'))).not.toBe(spki(recipientClaudeKey(privateKey, 'bob')))
    const next = generateKeyPairSync('ed25519').privateKey
    expect(spki(recipientClaudeKey(next, 'alice'))).not.toBe(spki(recipientClaudeKey(privateKey, 'alice')))
  })

  it('a derived key is the PKCS#8 import of its HKDF seed (the keys teammates were launched with stay valid)', () => {
    const d = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url')
    for (const name of ['alice', 'bob', 'm63']) {
      const seed = Buffer.from(hkdfSync('sha256', d, 'swarm-claude-lead-recipient-v1', name, 32))
      const pkcs8 = createPrivateKey({
        key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
        format: 'der',
        type: 'pkcs8',
      })
      const derived = recipientClaudeKey(privateKey, name)
      expect(formatClaudeVerifyKey(derived, 1)).toBe(formatClaudeVerifyKey(pkcs8, 1))
      expect(derived.export({ format: 'der', type: 'pkcs8' }).equals(pkcs8.export({ format: 'der', type: 'pkcs8' }))).toBe(true)
    }
  })
})
