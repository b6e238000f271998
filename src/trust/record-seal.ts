import { sign, verify, type KeyObject } from 'node:crypto'
import { importPublicKey } from './swarm-scheme.js'

/**
 * Seals for the team records the lead writes as files rather than messages — a resolved request
 * (`permissions/resolved/<id>.json`) and the "always" rules (`permissions/always-rules.json`,
 * `agents/<name>/always-rules.json`): Ed25519 with the team's key over a canonical JSON of the kind,
 * the team and the record (the seal field left out), so a file a teammate wrote, or one copied from
 * another team or another kind of record, does not verify. Pure: no file, no process.
 */

export type RecordKind = 'resolved' | 'always'

/** The field a sealed record carries its seal in. */
export const RECORD_SEAL_FIELD = 'leadSeal'

/** Seals a record body (the caller adds it as `leadSeal`). */
export type RecordSealer = (kind: RecordKind, team: string, body: Record<string, unknown>) => string

/** A sealer with the team's private key (a function: `lead.key` followed across `swarm team rekey`). */
export function recordSealer(privateKey: KeyObject | (() => KeyObject)): RecordSealer {
  const keyOf = typeof privateKey === 'function' ? privateKey : () => privateKey
  return (kind, team, body) => sign(null, payload(kind, team, body), keyOf()).toString('base64')
}

/** Whether `record`'s `leadSeal` was made by `publicKey` for this kind and team. */
export function verifyRecord(publicKey: KeyObject | string | undefined, kind: RecordKind, team: string, record: Record<string, unknown>): boolean {
  const seal = record[RECORD_SEAL_FIELD]
  if (publicKey === undefined || typeof seal !== 'string') return false
  try {
    return verify(null, payload(kind, team, record), importPublicKey(publicKey), Buffer.from(seal, 'base64'))
  } catch {
    return false
  }
}

function payload(kind: RecordKind, team: string, record: Record<string, unknown>): Buffer {
  const { [RECORD_SEAL_FIELD]: _seal, ...body } = record
  return Buffer.from(JSON.stringify({ v: 'swarm-record-v1', kind, team, body: canonical(body) }), 'utf8')
}

/** The value with every object's keys sorted (arrays keep their order): one JSON text per value. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  const o = value as Record<string, unknown>
  return Object.fromEntries(
    Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => [k, canonical(o[k])]),
  )
}
