import { NotFoundError } from '../errors.js'
import { inboxPath, validateAgentName } from '../home/paths.js'
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

/**
 * The entries of a message, one per recipient (its own msg_id), in the order of resolveRecipients.
 * Every check (recipient, size, fields) runs here, before anything is written, so a broadcast is
 * never half-refused. An author that signs (team-lead) signs these (trust/sign) before delivering.
 */
export function addressMessage(opts: MessageOptions): AddressedEntry[] {
  const recipients = resolveRecipients(opts.members, opts.to, opts.from)
  checkMessageSize(opts.text)
  return recipients.map((to) => ({ to, entry: createEntry({ from: opts.from, text: opts.text, color: opts.color, summary: opts.summary }) }))
}

/** Writes each entry into its recipient's inbox, as given: transport adds and checks no signature. */
export function deliverAddressed(team: string, addressed: AddressedEntry[], env?: NodeJS.ProcessEnv): Promise<InboxMessage[]> {
  return Promise.all(addressed.map((a) => appendMessage(inboxPath(team, a.to, env), a.entry)))
}

/** An unsigned message into each recipient's inbox (addressMessage, then deliverAddressed). */
export async function deliver(opts: MessageOptions & { team: string; env?: NodeJS.ProcessEnv }): Promise<InboxMessage[]> {
  return await deliverAddressed(opts.team, addressMessage(opts), opts.env)
}
