import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { encodeStructured } from '../../src/mailbox/messages.js'
import { ensureTeamKeys, loadLeadPrivateKey, loadLeadPublicKey } from '../../src/trust/keys.js'
import { leadSigner } from '../../src/trust/sign.js'
import { canonicalLeadPayload, exportPublicKey, importPublicKey, signLeadMessage, verifyLeadMessage } from '../../src/trust/swarm-scheme.js'
import { useTempDir } from '../support/home.js'

let env: NodeJS.ProcessEnv
useTempDir('swarm-perm-sign-', (d) => (env = { SWARM_HOME: d }))

const msg = (over: Record<string, unknown> = {}) => ({
  from: 'team-lead',
  text: encodeStructured({ type: 'shutdown_request', requestId: 'r1', from: 'team-lead', timestamp: '2026-01-01T00:00:00.000Z' }),
  timestamp: '2026-01-01T00:00:00.000Z',
  msg_id: '3f1c0e9a-0000-4000-8000-000000000001',
  ...over,
})

describe('signatures', () => {
  it('signs the canonical JSON of a version tag and exactly from, to, msg_id, text, timestamp', () => {
    expect(canonicalLeadPayload({ ...msg(), to: 'bob', extra: 1 } as never)).toBe(
      JSON.stringify({ v: 'swarm-lead-v2', from: 'team-lead', to: 'bob', msg_id: msg().msg_id, text: msg().text, timestamp: msg().timestamp }),
    )
  })

  it('verifies a signed message for its recipient and rejects any change, another recipient included', async () => {
    await ensureTeamKeys('alpha', env)
    const key = await loadLeadPrivateKey('alpha', env)
    const pub = await loadLeadPublicKey('alpha', env)
    const entry = { ...msg(), leadSig: signLeadMessage(key, { ...msg(), to: 'bob' }), read: false, color: 'blue' }
    expect(verifyLeadMessage(pub, entry, 'bob')).toBe(true)
    expect(verifyLeadMessage(importPublicKey(pub), entry, 'bob')).toBe(true)
    expect(verifyLeadMessage(pub, entry, 'alice')).toBe(false)
    for (const change of [{ text: entry.text + ' ' }, { from: 'alice' }, { timestamp: '2026-01-01T00:00:01.000Z' }, { msg_id: 'other' }]) {
      expect(verifyLeadMessage(pub, { ...entry, ...change }, 'bob'), JSON.stringify(change)).toBe(false)
    }
    const stranger = exportPublicKey(generateKeyPairSync('ed25519').publicKey)
    expect(verifyLeadMessage(stranger, entry, 'bob')).toBe(false)
    expect(verifyLeadMessage(pub, { ...entry, leadSig: 'not base64 at all!' }, 'bob')).toBe(false)
    expect(verifyLeadMessage(pub, { ...entry, leadSig: undefined }, 'bob')).toBe(false)
    expect(verifyLeadMessage(undefined, entry, 'bob')).toBe(false)
    expect(verifyLeadMessage('garbage-key', entry, 'bob')).toBe(false)
    expect(leadSigner(key)(msg(), 'bob')?.leadSig).toBe(entry.leadSig)
    expect(leadSigner(key)({ ...msg(), msg_id: undefined }, 'bob')).toBeUndefined()
  })
})
