import type { KeyObject } from 'node:crypto'
import { LEAD_NAME } from '../home/paths.js'
import { type ClaudeVerifyKey, signClaudeLeadEntry, verifyClaudeLeadEntry } from './claude-lead-sig.js'
import type { InboxMessage } from './types.js'

/**
 * One lead-signature layer, two schemes: every entry team-lead sends carries swarm's `leadSig` and
 * Claude Code's `lead_sig` (both Ed25519 with the team's key); a reader accepts either. The swarm
 * scheme itself lives in permissions/signing (its payload is that module's business).
 */

/** The signature fields of a lead entry. */
export interface LeadSignatures {
  leadSig?: string
  lead_sig?: string
}

/** What a signer returns: swarm's signature alone (a string) or both fields. */
export type LeadSignResult = string | LeadSignatures | undefined
/** Signs an entry for one recipient (swarm's scheme covers the recipient; Claude Code's does not). */
export type LeadSignFn = (entry: InboxMessage, to: string) => LeadSignResult

/** The entry with the signer's fields added (a string result is swarm's `leadSig`). */
export function withLeadSignature<T extends InboxMessage>(entry: T, sign: LeadSignFn | undefined, to: string): T {
  const result = sign?.(entry, to)
  if (result === undefined) return entry
  if (typeof result === 'string') return { ...entry, leadSig: result }
  return {
    ...entry,
    ...(result.leadSig !== undefined ? { leadSig: result.leadSig } : {}),
    ...(result.lead_sig !== undefined ? { lead_sig: result.lead_sig } : {}),
  }
}

/** A signer that adds Claude Code's `lead_sig` next to whatever `swarmSign` returns. */
export function dualLeadSigner(
  privateKey: KeyObject | (() => KeyObject),
  swarmSign: (entry: InboxMessage, to: string) => string | undefined,
): LeadSignFn {
  const keyOf = typeof privateKey === 'function' ? privateKey : () => privateKey
  return (entry, to) => {
    const leadSig = swarmSign(entry, to)
    if (entry.msg_id === undefined) return leadSig
    const lead_sig = signClaudeLeadEntry(keyOf(), { ...entry, msg_id: entry.msg_id, from_plugin: stringField(entry, 'from_plugin') })
    return { ...(leadSig !== undefined ? { leadSig } : {}), lead_sig }
  }
}

/** The keys a reader checks lead entries with. */
export interface LeadVerifyKeys {
  /** swarm's scheme: `leadSig` (`SWARM_LEAD_VERIFY_KEY` / lead.pub), checked for this reader as recipient. */
  swarm?: (entry: InboxMessage) => boolean
  /** Claude Code's scheme: `lead_sig`, with the `--lead-verify-key` (launch time + key) or a bare key. */
  claude?: ClaudeVerifyKey | KeyObject
}

export type LeadVerdict = 'verified' | 'unverified' | 'not-lead'

/** `not-lead` unless from team-lead; then `verified` when either signature holds. */
export function classifyLeadEntry(entry: InboxMessage, keys: LeadVerifyKeys): LeadVerdict {
  if (entry.from !== LEAD_NAME) return 'not-lead'
  if (keys.swarm?.(entry)) return 'verified'
  const claudeEntry = { ...entry, from_plugin: stringField(entry, 'from_plugin'), lead_sig: (entry as Record<string, unknown>).lead_sig }
  return verifyClaudeLeadEntry(keys.claude, claudeEntry) ? 'verified' : 'unverified'
}

function stringField(entry: InboxMessage, key: string): string | undefined {
  const value = (entry as Record<string, unknown>)[key]
  return typeof value === 'string' ? value : undefined
}
