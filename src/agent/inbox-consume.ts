import { markRead } from '../mailbox/inbox.js'
import type { InboxMessage } from '../mailbox/types.js'

/** Marking what a turn consumed as read: by msg_id, or by sender + time + text for entries without one. */

export function messageKey(m: InboxMessage): string {
  return m.msg_id ?? `${m.from}|${m.timestamp}|${m.text}`
}

/** Marks `all` read in the inbox `file` (local entries — typed at the console — were never in it). */
export async function markConsumed(file: string, all: InboxMessage[]): Promise<void> {
  const messages = all.filter((m) => !m.local)
  if (messages.length === 0) return
  const ids = messages.flatMap((m) => (m.msg_id ? [m.msg_id] : []))
  const legacy = messages.filter((m) => !m.msg_id)
  if (ids.length) await markRead(file, { msgIds: ids })
  if (legacy.length) {
    const keys = new Set(legacy.map(messageKey))
    await markRead(file, (m) => !m.msg_id && keys.has(messageKey(m)))
  }
}
