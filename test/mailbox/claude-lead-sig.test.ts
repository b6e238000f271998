import { generateKeyPairSync } from 'node:crypto'
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
} from '../../src/mailbox/claude-lead-sig.js'
import { classifyLeadEntry, dualLeadSigner, withLeadSignature } from '../../src/mailbox/lead-signature.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { leadSigner, verifyLeadMessage } from '../../src/mailbox/signing.js'

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

describe('one lead-signature layer, two schemes', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const sign = dualLeadSigner(privateKey, leadSigner(privateKey))
  const entry = withLeadSignature(
    createEntry({ from: 'team-lead', text: '{"type":"shutdown_request"}', color: 'blue', summary: 'stop' }),
    sign,
    'alice',
  )

  it('every lead entry carries both signatures, each verifying under its own scheme', () => {
    expect(typeof entry.leadSig).toBe('string')
    expect(typeof entry.lead_sig).toBe('string')
    expect(verifyLeadMessage(publicKey, entry, 'alice')).toBe(true)
    expect(verifyClaudeLeadEntry(parseClaudeVerifyKey(formatClaudeVerifyKey(publicKey, Date.now())), entry)).toBe(true)
  })

  it('a reader accepts either signature and nothing else', () => {
    const swarmOnly = { swarm: (e: typeof entry) => verifyLeadMessage(publicKey, e, 'alice') }
    const claudeOnly = { claude: parseClaudeVerifyKey(formatClaudeVerifyKey(publicKey, Date.now())) }
    const { lead_sig: _c, ...withoutClaude } = entry
    const { leadSig: _s, ...withoutSwarm } = entry
    expect(classifyLeadEntry(withoutClaude, swarmOnly)).toBe('verified')
    expect(classifyLeadEntry(withoutSwarm, claudeOnly)).toBe('verified')
    expect(classifyLeadEntry(withoutSwarm, swarmOnly)).toBe('unverified')
    expect(classifyLeadEntry({ ...entry, text: 'forged' }, { ...swarmOnly, ...claudeOnly })).toBe('unverified')
    expect(classifyLeadEntry({ ...entry, from: 'bob' }, swarmOnly)).toBe('not-lead')
    expect(classifyLeadEntry(fixture.entry, { claude: parseClaudeVerifyKey(fixture.leadVerifyKey) })).toBe('verified')
  })
})
