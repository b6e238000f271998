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

export interface DeliverOptions {
  team: string
  /** Names of the team's members (the roster the caller read). */
  members: string[]
  from: string
  /** A member's name or `*`. */
  to: string
  text: string
  summary?: string
  color?: string
  /** Signs each final entry (timestamp and msg_id set) for its recipient; the result becomes its `leadSig`. */
  sign?: (m: InboxMessage, to: string) => string | undefined
  env?: NodeJS.ProcessEnv
}

/**
 * Writes the message into each recipient's inbox (one entry and msg_id per recipient), in the order
 * of resolveRecipients. Every check (recipient, size, fields) runs before the first write, so a
 * broadcast is never half-refused.
 */
export async function deliver(opts: DeliverOptions): Promise<InboxMessage[]> {
  const recipients = resolveRecipients(opts.members, opts.to, opts.from)
  checkMessageSize(opts.text)
  const entries = recipients.map((to) => {
    const entry = createEntry({ from: opts.from, text: opts.text, color: opts.color, summary: opts.summary })
    const sig = opts.sign?.(entry, to)
    return sig === undefined ? entry : { ...entry, leadSig: sig }
  })
  const files = recipients.map((name) => inboxPath(opts.team, name, opts.env))
  return Promise.all(entries.map((entry, i) => appendMessage(files[i], entry)))
}
