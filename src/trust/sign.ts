import type { KeyObject } from 'node:crypto'
import { NotFoundError } from '../errors.js'
import type { InboxMessage } from '../mailbox/types.js'
import { type AddressedEntry, type SealedEntry, markSealed } from '../mailbox/send.js'
import { LEAD_NAME } from '../home/paths.js'
import { formatClaudeVerifyKey, recipientClaudeKey, signClaudeLeadEntry } from './claude-scheme.js'
import { currentLeadKey, ensureTeamKeys, leadKeyPath, leadKeysStamp } from './keys.js'
import { signLeadMessage } from './swarm-scheme.js'

/**
 * Signing lead entries, done by the layer that authors them (never by mailbox transport): each
 * entry gets swarm's `leadSig` (the recipient in its payload) and Claude Code's `lead_sig` made
 * with the recipient's own derived key — so in both schemes a signature is good for one inbox.
 */

/** The signature fields of a lead entry. */
export interface LeadSignatures {
  leadSig?: string
  lead_sig?: string
}

/** Signs an entry for its recipient `to`; undefined for an entry that cannot be signed (no msg_id). */
export type LeadSignFn = (entry: InboxMessage, to: string) => LeadSignatures | undefined

/** A signer in both schemes with the team's private key (a function: `lead.key` followed across `swarm team rekey`). */
export function leadSigner(privateKey: KeyObject | (() => KeyObject)): LeadSignFn {
  const keyOf = typeof privateKey === 'function' ? privateKey : () => privateKey
  return (entry, to) => {
    if (entry.msg_id === undefined) return undefined
    const key = keyOf()
    const msg_id = entry.msg_id
    return {
      leadSig: signLeadMessage(key, { from: entry.from, to, text: entry.text, timestamp: entry.timestamp, msg_id }),
      lead_sig: signClaudeLeadEntry(recipientClaudeKey(key, to), { ...entry, msg_id, from_plugin: stringField(entry, 'from_plugin') }),
    }
  }
}

/** The entry with the signer's fields added (unchanged without a signer). */
export function signEntry<T extends InboxMessage>(entry: T, sign: LeadSignFn | undefined, to: string): T {
  const sigs = sign?.(entry, to)
  if (sigs === undefined) return entry
  return {
    ...entry,
    ...(sigs.leadSig !== undefined ? { leadSig: sigs.leadSig } : {}),
    ...(sigs.lead_sig !== undefined ? { lead_sig: sigs.lead_sig } : {}),
  }
}

/**
 * Who seals an author's entries: team-lead's signer; `teammate` for a member that signs nothing;
 * `claude-lead` for team-lead's entries in a team led by Claude Code, whose keys swarm does not hold;
 * `relayed` for entries carried verbatim from the team's mailbox on another machine (remote/),
 * sealed there by their author: a team-lead entry keeps the signatures its recipient's gate checks.
 */
export type Sealer = LeadSignFn | 'teammate' | 'claude-lead' | 'relayed'

/**
 * Addressed entries (mailbox/send `addressMessage`) made deliverable: each team-lead entry signed
 * for its recipient. A team-lead entry without a signer is refused (an Error, before anything is
 * written) unless the team is led by Claude Code: every order swarm writes as team-lead is signed;
 * a relayed one must arrive signed.
 */
export function seal(addressed: readonly AddressedEntry[], sealer: Sealer): SealedEntry[] {
  return markSealed(
    addressed.map((a) => {
      if (typeof sealer === 'function') return { ...a, entry: signEntry(a.entry, sealer, a.to) }
      if (a.entry.from === LEAD_NAME && sealer === 'teammate')
        throw new Error(`an entry from ${LEAD_NAME} to ${a.to} must be signed: no lead signer was given`)
      if (a.entry.from === LEAD_NAME && sealer === 'relayed' && a.entry.leadSig === undefined && a.entry.lead_sig === undefined)
        throw new Error(`a relayed entry from ${LEAD_NAME} to ${a.to} carries no signature`)
      return a
    }),
  )
}

/**
 * The `--lead-verify-key` of a Claude Code teammate `recipient` (`<launchMs>.<key>`): the public half
 * of its derived key, the only key its `lead_sig` checks hold for.
 */
export function claudeVerifyKeyFor(teamKey: KeyObject, recipient: string, launchMs: number = Date.now()): string {
  return formatClaudeVerifyKey(recipientClaudeKey(teamKey, recipient), launchMs)
}

/**
 * The lead's signer for a team (following `swarm team rekey`); a team that never had a key pair
 * gets one, a team that lost its `lead.key` is an error naming `swarm team rekey`.
 */
export async function teamLeadSigner(team: string, env?: NodeJS.ProcessEnv): Promise<LeadSignFn> {
  const keyFile = leadKeyPath(team, env)
  const known = signers.get(keyFile)
  const before = leadKeysStamp(team, env)
  if (known && before !== undefined && known.stamp === before) return known.sign
  await ensureTeamKeys(team, env)
  const sign = leadSigner(await currentLeadKey(team, env))
  // Kept only when nothing changed the files while they were checked (ensureTeamKeys repairing
  // them included): the next call checks again.
  if (before !== undefined && leadKeysStamp(team, env) === before) signers.set(keyFile, { stamp: before, sign })
  return sign
}

/**
 * The signer teamLeadSigner last made per `lead.key`, with the stamp of both key files it checked
 * (leadKeysStamp): while neither file changed, ensureTeamKeys would find what it found then, so a
 * process that signs often (the leader answering sends on its socket) skips its ~20 file reads.
 */
const signers = new Map<string, { stamp: string; sign: LeadSignFn }>()

/** The lead's signer, or undefined when `lead.key` is lost (stopping a team must still work; unsigned orders are then ignored and the stop is forced). */
export async function teamLeadSignerIfAny(team: string, env?: NodeJS.ProcessEnv): Promise<LeadSignFn | undefined> {
  try {
    return await teamLeadSigner(team, env)
  } catch (err) {
    if (err instanceof NotFoundError) return undefined
    throw err
  }
}

function stringField(entry: InboxMessage, key: string): string | undefined {
  const value = (entry as Record<string, unknown>)[key]
  return typeof value === 'string' ? value : undefined
}
