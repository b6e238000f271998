import { NotFoundError } from '../errors.js'
import { LEAD_NAME, inboxPath, validateAgentName } from '../home/paths.js'
import { checkMessageSize, createEntry } from './entry.js'
import { appendMessage } from './inbox.js'
import type { InboxMessage } from './types.js'

/**
 * Who receives a message sent to `to`: that member, or with `*` every member but the sender.
 * A name that is not a member is a NotFoundError (exit 3), so no orphan inbox is ever created.
 */
export function resolveRecipients(members: string[], to: string, from: string): string[] {
  if (to === '*') return [...new Set(members)].filter((name) => name !== from)
  validateAgentName(to)
  if (!members.includes(to)) {
    throw new NotFoundError(`no member named "${to}" in this team`, {
      hint: members.length ? `members: ${members.join(', ')}; or "*" for everyone` : 'the team has no members',
    })
  }
  return [to]
}

export interface MessageOptions {
  /** Names of the team's members (the roster the caller read). */
  members: string[]
  from: string
  /** A member's name or `*`. */
  to: string
  text: string
  summary?: string
  color?: string
}

/** One entry made for one recipient's inbox. */
export interface AddressedEntry {
  to: string
  entry: InboxMessage
}

declare const SEALED: unique symbol
/**
 * An addressed entry that went through its author's seal (trust/sign `seal`: a team-lead entry
 * signed for its recipient, a teammate's as it is). Only `seal` makes one, and only a sealed
 * entry is delivered: an unsigned lead order cannot be written by a path that forgot to sign.
 */
export type SealedEntry = AddressedEntry & { readonly [SEALED]: true }

/** The entries `markSealed` vouched for: deliverAddressed refuses a team-lead entry that is not one (a cast cannot forge the brand). */
const sealedEntries = new WeakSet<InboxMessage>()

/** For trust/sign `seal` only (test/security/lead-entry-writers checks it): the entries as sealed. */
export function markSealed(addressed: readonly AddressedEntry[]): SealedEntry[] {
  for (const a of addressed) sealedEntries.add(a.entry)
  return addressed as SealedEntry[]
}

/** A team-lead entry that did not come out of `seal`: refused before anything is written. */
export class UnsealedLeadEntryError extends Error {
  override name = 'UnsealedLeadEntryError'
  constructor(to: string) {
    super(`an entry from ${LEAD_NAME} to ${to} did not go through the lead's seal: nothing was written`)
  }
}

/**
 * The entries of a message, one per recipient (its own msg_id), in the order of resolveRecipients.
 * Every check (recipient, size, fields) runs here, before anything is written, so a broadcast is
 * never half-refused. The author seals them (trust/sign `seal`: team-lead signs) before delivering.
 */
export function addressMessage(opts: MessageOptions): AddressedEntry[] {
  const recipients = resolveRecipients(opts.members, opts.to, opts.from)
  checkMessageSize(opts.text)
  return recipients.map((to) => ({ to, entry: createEntry({ from: opts.from, text: opts.text, color: opts.color, summary: opts.summary }) }))
}

/** Writes each sealed entry into its recipient's inbox, as given: transport adds and checks no signature. */
export function deliverAddressed(team: string, addressed: readonly SealedEntry[], env?: NodeJS.ProcessEnv): Promise<InboxMessage[]> {
  const unsealed = addressed.find((a) => a.entry.from === LEAD_NAME && !sealedEntries.has(a.entry))
  if (unsealed) return Promise.reject(new UnsealedLeadEntryError(unsealed.to))
  return Promise.all(addressed.map((a) => appendMessage(inboxPath(team, a.to, env), a.entry)))
}
