import { createHash, randomUUID } from 'node:crypto'
import { ExitCode, SwarmError, UsageError } from '../errors.js'
import { InboxMessage, MAX_MESSAGE_BYTES, type MessageState } from './types.js'

/**
 * A message to append. `timestamp`, `msg_id`, `msgV` and `read` are filled in when absent (a
 * caller that must sign the final entry builds it first with `createEntry`); any extra field is kept.
 */
export type NewMessage = {
  from: string
  text: string
  color?: string
  summary?: string
  leadSig?: string
  [k: string]: unknown
}

/** Refuses a text over MAX_MESSAGE_BYTES, before any file is touched. */
export function checkMessageSize(text: string): void {
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new SwarmError('SWARM_MESSAGE_TOO_LARGE', `message text is ${bytes} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (1 MiB)`, {
      exitCode: ExitCode.usage,
      hint: 'write long content to a file (e.g. the team scratchpad) and send its path',
    })
  }
}

/**
 * Builds the inbox entry for `message` in Claude Code's field order, validated with the
 * InboxMessage schema so that nothing a reader would reject ever reaches the file.
 */
export function createEntry(message: NewMessage): InboxMessage {
  if (typeof message?.text !== 'string') throw new UsageError('a message needs a text')
  if (typeof message.from !== 'string' || message.from === '') throw new UsageError('a message needs a sender (from)')
  checkMessageSize(message.text)
  const { from, text, timestamp, read, color, summary, msg_id, msgV, ...rest } = message
  const draft = {
    from,
    text,
    timestamp: timestamp ?? new Date().toISOString(),
    read: read ?? false,
    ...(color === undefined ? {} : { color }),
    ...(summary === undefined ? {} : { summary }),
    msg_id: msg_id ?? randomUUID(),
    msgV: msgV ?? 1,
    ...rest,
  }
  const parsed = InboxMessage.safeParse(draft)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new UsageError(`invalid message field ${issue?.path.join('.') || '(root)'}: ${issue?.message}`)
  }
  return parsed.data
}

/**
 * Identity of a message for dedup and receipts: its `msg_id`, or for entries written without one
 * (older Claude Code) a hash of sender, timestamp and text.
 */
export function messageKey(m: InboxMessage): string {
  if (m.msg_id) return m.msg_id
  return 'sha1:' + createHash('sha1').update(`${m.from}\u0000${m.timestamp}\u0000${m.text}`).digest('hex')
}

/** Which of the three states a message is in (an entry without `read` is unread). */
export function messageState(m: InboxMessage): MessageState {
  if (m.read === true) return 'read'
  return m.deliveredAt ? 'delivered' : 'sent'
}
