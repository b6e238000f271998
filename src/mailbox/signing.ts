import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { CorruptFileError, NotFoundError } from '../errors.js'
import type { StructuredMessage } from './messages.js'
import { PRIVILEGED_TYPES } from './messages.js'
import { LEAD_KEY_FILE, LEAD_NAME, teamDir } from '../home/paths.js'
import { FILE_MODE, atomicWriteFile, ensureDir, readFileIfExists } from '../util/fs.js'

/**
 * Lead signatures (docs/architecture.md §2): an Ed25519 key pair per team. The private key lives 0600 in the
 * team directory, where evaluatePermission keeps every teammate tool away from it; teammates get
 * the public key at launch through the environment (never argv) or the public file.
 */

/** Environment variable through which a teammate receives the lead's public key (base64, raw 32 bytes). */
export const LEAD_VERIFY_KEY_ENV = 'SWARM_LEAD_VERIFY_KEY'
export const LEAD_PUBLIC_KEY_FILE = 'lead.pub'

export function leadKeyPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), LEAD_KEY_FILE)
}
export function leadPublicKeyPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), LEAD_PUBLIC_KEY_FILE)
}

/**
 * Creates the team's key pair unless it exists; safe when several processes race (the first
 * key written wins, the others read it). Returns the public key to hand to teammates, derived
 * from the private key itself.
 */
export async function ensureTeamKeys(team: string, env?: NodeJS.ProcessEnv): Promise<{ publicKey: string; created: boolean }> {
  const keyFile = leadKeyPath(team, env)
  await ensureDir(path.dirname(keyFile))
  let created = false
  if ((await readFileIfExists(keyFile)) === undefined) {
    const { privateKey } = generateKeyPairSync('ed25519')
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string
    const tmp = path.join(path.dirname(keyFile), `.${LEAD_KEY_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
    await fs.writeFile(tmp, pem, { flag: 'wx', mode: FILE_MODE })
    try {
      // link() fails with EEXIST when another process got there first: exactly one key is kept.
      await fs.link(tmp, keyFile)
      created = true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    } finally {
      await fs.rm(tmp, { force: true })
    }
  }
  const publicKey = exportPublicKey(createPublicKey(await loadLeadPrivateKey(team, env)))
  await atomicWriteFile(leadPublicKeyPath(team, env), publicKey + '\n')
  return { publicKey, created }
}

/** The team's private key. NotFoundError when the team has none; CorruptFileError when it does not parse. */
export async function loadLeadPrivateKey(team: string, env?: NodeJS.ProcessEnv): Promise<KeyObject> {
  const keyFile = leadKeyPath(team, env)
  const pem = await readFileIfExists(keyFile)
  if (pem === undefined) {
    throw new NotFoundError(`team ${JSON.stringify(team)} has no lead signing key (${keyFile})`, {
      hint: 'the key is created when the team is created; run `swarm team resume` to recreate it',
    })
  }
  const stat = await fs.stat(keyFile)
  if ((stat.mode & 0o077) !== 0) await fs.chmod(keyFile, FILE_MODE) // someone loosened it: tighten again
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' })
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an ed25519 key, got ${key.asymmetricKeyType}`)
    return key
  } catch (err) {
    throw new CorruptFileError(keyFile, `not an Ed25519 private key: ${(err as Error).message}`, { cause: err })
  }
}

/** The team's public key as written to `lead.pub` (base64 of the raw 32 bytes). */
export async function loadLeadPublicKey(team: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const file = leadPublicKeyPath(team, env)
  const text = await readFileIfExists(file)
  if (text === undefined) throw new NotFoundError(`team ${JSON.stringify(team)} has no lead public key (${file})`)
  try {
    return exportPublicKey(importPublicKey(text.trim()))
  } catch (err) {
    throw new CorruptFileError(file, `not an Ed25519 public key: ${(err as Error).message}`, { cause: err })
  }
}

/**
 * The key a teammate verifies the lead with: `$SWARM_LEAD_VERIFY_KEY`, else the team's `lead.pub`,
 * else undefined (every lead message is then unverified).
 */
export async function resolveLeadVerifyKey(team: string, env: NodeJS.ProcessEnv = process.env): Promise<KeyObject | undefined> {
  const fromEnv = env[LEAD_VERIFY_KEY_ENV]
  if (fromEnv) return importPublicKey(fromEnv)
  try {
    return importPublicKey(await loadLeadPublicKey(team, env))
  } catch (err) {
    if (err instanceof NotFoundError) return undefined
    throw err
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

/** The four fields a lead signature covers. */
export interface SignedFields {
  from: string
  text: string
  timestamp: string
  msg_id: string
}

/** Canonical JSON (sorted keys, no whitespace) of exactly from, msg_id, text, timestamp. */
export function canonicalLeadPayload(m: SignedFields): string {
  return JSON.stringify({ from: m.from, msg_id: m.msg_id, text: m.text, timestamp: m.timestamp })
}

/** base64 Ed25519 signature over canonicalLeadPayload(m). */
export function signLeadMessage(privateKey: KeyObject, m: SignedFields): string {
  return sign(null, Buffer.from(canonicalLeadPayload(m), 'utf8'), privateKey).toString('base64')
}

/** A signer for `deliver({ sign })`: signs every entry that has a msg_id. */
export function leadSigner(privateKey: KeyObject): (m: { from: string; text: string; timestamp: string; msg_id?: string }) => string | undefined {
  return (m) => (m.msg_id === undefined ? undefined : signLeadMessage(privateKey, { ...m, msg_id: m.msg_id }))
}

/** The shape of an inbox entry this module reads. */
export interface SignableEntry {
  from: string
  text: string
  timestamp: string
  msg_id?: string
  leadSig?: string
}

/** True when `entry.leadSig` is a valid signature by `publicKey`; false for anything else, never throws. */
export function verifyLeadMessage(publicKey: KeyObject | string | undefined, entry: SignableEntry): boolean {
  if (publicKey === undefined || typeof entry.leadSig !== 'string' || typeof entry.msg_id !== 'string') return false
  try {
    const key = importPublicKey(publicKey)
    const sig = Buffer.from(entry.leadSig, 'base64')
    if (sig.length !== 64) return false
    return verify(null, Buffer.from(canonicalLeadPayload(entry as SignedFields), 'utf8'), key, sig)
  } catch {
    return false // a malformed key or signature is simply not a valid signature
  }
}

export type LeadClassification = 'verified' | 'unverified' | 'not-lead'

/** `not-lead` unless `from` is team-lead; then `verified` only with a valid signature. */
export function classifyLeadMessage(entry: SignableEntry, publicKey: KeyObject | string | undefined): LeadClassification {
  if (entry.from !== LEAD_NAME) return 'not-lead'
  return verifyLeadMessage(publicKey, entry) ? 'verified' : 'unverified'
}

/**
 * Whether a teammate may act on a structured message: privileged types (permission_response,
 * plan_approval_response, shutdown_request, mode_set_request, team_permission_update) count only
 * from team-lead with a valid signature; every other message (and plain text) passes.
 */
export function acceptPrivileged(
  entry: SignableEntry,
  structured: StructuredMessage | undefined,
  publicKey: KeyObject | string | undefined,
): boolean {
  if (structured === undefined || !PRIVILEGED_TYPES.has(structured.type)) return true
  return classifyLeadMessage(entry, publicKey) === 'verified'
}
