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
export type LeadSignFn = (entry: InboxMessage) => LeadSignResult

/** The entry with the signer's fields added (a string result is swarm's `leadSig`). */
export function withLeadSignature<T extends InboxMessage>(entry: T, sign: LeadSignFn | undefined): T {
  const result = sign?.(entry)
  if (result === undefined) return entry
  if (typeof result === 'string') return { ...entry, leadSig: result }
  return {
    ...entry,
    ...(result.leadSig !== undefined ? { leadSig: result.leadSig } : {}),
    ...(result.lead_sig !== undefined ? { lead_sig: result.lead_sig } : {}),
  }
}

/** A signer that adds Claude Code's `lead_sig` next to whatever `swarmSign` returns. */
export function dualLeadSigner(privateKey: KeyObject, swarmSign: (entry: InboxMessage) => string | undefined): LeadSignFn {
  return (entry) => {
    const leadSig = swarmSign(entry)
    if (entry.msg_id === undefined) return leadSig
    const lead_sig = signClaudeLeadEntry(privateKey, { ...entry, msg_id: entry.msg_id, from_plugin: stringField(entry, 'from_plugin') })
    return { ...(leadSig !== undefined ? { leadSig } : {}), lead_sig }
  }
}

/** The keys a reader checks lead entries with. */
export interface LeadVerifyKeys {
  /** swarm's scheme: `leadSig` (`SWARM_LEAD_VERIFY_KEY` / lead.pub). */
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
