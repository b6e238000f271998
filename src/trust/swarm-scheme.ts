import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto'

/**
 * swarm's lead-signature scheme (`leadSig`): Ed25519 with the team's key over a canonical JSON of
 * the sender, the RECIPIENT, the message id, the text and the time — a signed order is good for
 * the one inbox it was written to. Pure: no file, no process; the keys come from trust/keys.
 */

/** What swarm's lead signature covers. */
export interface SignedFields {
  from: string
  to: string
  text: string
  timestamp: string
  msg_id: string
}

/** The version tag of swarm's signed payload (v1 had no recipient; its signatures no longer verify). */
const PAYLOAD_VERSION = 'swarm-lead-v2'

/** Canonical JSON (fixed key order, no whitespace) of the version tag and exactly the signed fields. */
export function canonicalLeadPayload(m: SignedFields): string {
  return JSON.stringify({ v: PAYLOAD_VERSION, from: m.from, to: m.to, msg_id: m.msg_id, text: m.text, timestamp: m.timestamp })
}

/** base64 Ed25519 signature over canonicalLeadPayload(m). */
export function signLeadMessage(privateKey: KeyObject, m: SignedFields): string {
  return sign(null, Buffer.from(canonicalLeadPayload(m), 'utf8'), privateKey).toString('base64')
}

/** The shape of an inbox entry this scheme reads. */
export interface SignableEntry {
  from: string
  text: string
  timestamp: string
  msg_id?: string
  leadSig?: string
}

/**
 * True when `entry.leadSig` is a valid signature by `publicKey` of this entry addressed to
 * `recipient` (the member whose inbox holds it); false for anything else, never throws.
 */
export function verifyLeadMessage(publicKey: KeyObject | string | undefined, entry: SignableEntry, recipient: string): boolean {
  if (publicKey === undefined || typeof entry.leadSig !== 'string' || typeof entry.msg_id !== 'string') return false
  try {
    const key = importPublicKey(publicKey)
    const sig = Buffer.from(entry.leadSig, 'base64')
    if (sig.length !== 64) return false
    const fields: SignedFields = { from: entry.from, to: recipient, text: entry.text, timestamp: entry.timestamp, msg_id: entry.msg_id }
    return verify(null, Buffer.from(canonicalLeadPayload(fields), 'utf8'), key, sig)
  } catch {
    return false // a malformed key or signature is simply not a valid signature
  }
}

/** base64 of the raw 32-byte Ed25519 public key. */
export function exportPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' })
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 public key')
  return Buffer.from(jwk.x, 'base64url').toString('base64')
}

/** Accepts base64 raw (as exported), a PEM SPKI public key, or a KeyObject. */
export function importPublicKey(key: string | KeyObject): KeyObject {
  if (typeof key !== 'string') return key.type === 'private' ? createPublicKey(key) : key
  if (key.includes('-----BEGIN')) return createPublicKey({ key, format: 'pem' })
  const raw = Buffer.from(key.trim(), 'base64')
  if (raw.length !== 32) throw new Error(`expected 32 bytes of Ed25519 public key, got ${raw.length}`)
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}
