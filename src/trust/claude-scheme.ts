import { createPrivateKey, createPublicKey, hkdfSync, sign, verify, type KeyObject } from 'node:crypto'

/**
 * Claude Code's lead-signature scheme (2.1.332, checked against its binary): `lead_sig` is base64url
 * Ed25519 over `JSON.stringify(["claude-team-lead-entry-v1", msg_id, from, timestamp, text, summary,
 * color, from_plugin])` (absent → null); the key reaches a teammate as `--lead-verify-key <ms>.<key>`.
 * The payload names no recipient, so the KEY is per recipient: Claude Code makes one pair per
 * teammate, and swarm derives one per recipient from the team's key (recipientClaudeKey). Pure.
 */

/** How swarm hands a Claude-format lead key to a swarm teammate (besides `--lead-verify-key`). */
export const CLAUDE_LEAD_VERIFY_KEY_ENV = 'SWARM_CLAUDE_LEAD_VERIFY_KEY'

export const CLAUDE_LEAD_SIG_DOMAIN = 'claude-team-lead-entry-v1'
/** How far before the key's launch time an entry may be dated and still count (Claude Code: ~2 min). */
export const CLAUDE_LEAD_SIG_SKEW_MS = 2 * 60_000

/** The fields Claude Code's signature covers. */
export interface ClaudeSignedFields {
  msg_id?: string
  from: string
  timestamp: string
  text: string
  summary?: string
  color?: string
  from_plugin?: string
}

/** A parsed `--lead-verify-key`: when the teammate was launched, and the lead's public key. */
export interface ClaudeVerifyKey {
  launchMs: number
  key: KeyObject
}

const VERIFY_KEY_RE = /^(\d+)\.([\w-]+)$/

/** The HKDF salt of swarm's per-recipient Claude-format keys (a new tag would be a new set of keys). */
const RECIPIENT_KEY_SALT = 'swarm-claude-lead-recipient-v1'
/** PKCS#8 DER of an Ed25519 private key, before its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

/**
 * The private key swarm signs `lead_sig` with for `recipient`: HKDF-SHA256 of the team key's seed,
 * with the recipient's name as info. A signature made for w1 does not verify under w2's key, and a
 * new team key (`swarm team rekey`) makes new recipient keys.
 */
export function recipientClaudeKey(teamKey: KeyObject, recipient: string): KeyObject {
  const d = teamKey.export({ format: 'jwk' }).d
  if (typeof d !== 'string') throw new Error('not an Ed25519 private key')
  const memo = `${d}\0${recipient}`
  const known = derived.get(memo)
  if (known) return known
  const seed = Buffer.from(hkdfSync('sha256', Buffer.from(d, 'base64url'), RECIPIENT_KEY_SALT, recipient, 32))
  const key = privateKeyOfSeed(seed)
  if (derived.size >= DERIVED_KEYS_KEPT) derived.clear()
  derived.set(memo, key)
  return key
}

/**
 * The Ed25519 private key of a 32-byte seed. Through JWK first: OpenSSL 3's PKCS#8 decoder took
 * 0.5 ms a key quiet and 2.2 ms under load against 0.3 ms for the JWK import, and `swarm send '*'`
 * derives one key per recipient (issue 25). Node makes an OKP private key from `d` and computes
 * its public half itself; JWK wants an `x` beside it, which it does not read, so a placeholder of
 * the right form goes there (test/trust/claude-scheme: the same key as the PKCS#8 import). A Node
 * that refused it would get the PKCS#8 import.
 */
function privateKeyOfSeed(seed: Buffer): KeyObject {
  try {
    return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: UNREAD_X }, format: 'jwk' })
  } catch {
    return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' })
  }
}

/** A 32-byte base64url value in the JWK's `x`, which the import of a private key does not read. */
const UNREAD_X = Buffer.alloc(32).toString('base64url')

/**
 * Recipient keys derived in this process, by team key and recipient: importing one (PKCS#8 DER)
 * costs ~0.5 ms, signing with it ~0.04 ms, and a broadcast from the leader signs one per
 * recipient each time (issue 25: 64 recipients). Bounded: a process signs for a team or two.
 */
const derived = new Map<string, KeyObject>()
const DERIVED_KEYS_KEPT = 1_024

export function claudeLeadPayload(e: ClaudeSignedFields): Buffer {
  const fields = [CLAUDE_LEAD_SIG_DOMAIN, e.msg_id, e.from, e.timestamp, e.text, e.summary ?? null, e.color ?? null, e.from_plugin ?? null]
  return Buffer.from(JSON.stringify(fields), 'utf8')
}

/** base64url `lead_sig` of an entry, with the team's private key. */
export function signClaudeLeadEntry(privateKey: KeyObject, e: ClaudeSignedFields): string {
  return sign(null, claudeLeadPayload(e), privateKey).toString('base64url')
}

/** `<launchMs>.<base64url DER SPKI>`: the value Claude Code passes as `--lead-verify-key`. */
export function formatClaudeVerifyKey(key: KeyObject, launchMs: number = Date.now()): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key
  return `${launchMs}.${publicKey.export({ format: 'der', type: 'spki' }).toString('base64url')}`
}

/** Parses a `--lead-verify-key` value; undefined when it is not `<ms>.<Ed25519 SPKI>`. */
export function parseClaudeVerifyKey(value: string | undefined): ClaudeVerifyKey | undefined {
  const match = value === undefined ? null : VERIFY_KEY_RE.exec(value.trim())
  if (!match) return undefined
  const launchMs = Number(match[1])
  if (!Number.isSafeInteger(launchMs)) return undefined
  try {
    const key = createPublicKey({ key: Buffer.from(match[2]!, 'base64url'), format: 'der', type: 'spki' })
    return key.asymmetricKeyType === 'ed25519' ? { launchMs, key } : undefined
  } catch {
    return undefined
  }
}

/**
 * True when `entry.lead_sig` verifies under the key and, with a launch time, the entry is not dated
 * more than CLAUDE_LEAD_SIG_SKEW_MS before it. Never throws.
 */
export function verifyClaudeLeadEntry(key: ClaudeVerifyKey | KeyObject | undefined, entry: ClaudeSignedFields & { lead_sig?: unknown }): boolean {
  if (key === undefined || typeof entry.lead_sig !== 'string') return false
  const { key: publicKey, launchMs } = 'launchMs' in key ? key : { key, launchMs: undefined }
  if (launchMs !== undefined) {
    const at = Date.parse(entry.timestamp)
    if (!Number.isFinite(at) || at < launchMs - CLAUDE_LEAD_SIG_SKEW_MS) return false
  }
  try {
    const sig = Buffer.from(entry.lead_sig, 'base64url')
    return sig.length === 64 && verify(null, claudeLeadPayload(entry), publicKey, sig)
  } catch {
    return false
  }
}
