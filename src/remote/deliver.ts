import { inboxPath } from '../home/paths.js'
import type { Env } from '../home/env.js'
import { readInbox } from '../mailbox/inbox.js'
import { deliverAddressed } from '../mailbox/send.js'
import type { InboxMessage } from '../mailbox/types.js'
import { seal } from '../trust/sign.js'

/**
 * Puts a relayed entry into `to`'s inbox on this machine, as it was written on the other one
 * (msg_id, timestamp, signatures), unread — once: an entry whose msg_id the inbox holds already
 * (applied before a crash could record it) is not written again.
 */
export async function deliverRelayed(team: string, to: string, entry: InboxMessage, env: Env): Promise<void> {
  const file = inboxPath(team, to, env)
  if (entry.msg_id !== undefined && (await readInbox(file)).some((m) => m.msg_id === entry.msg_id)) return
  const { deliveredAt: _d, ...rest } = entry
  await deliverAddressed(team, seal([{ to, entry: { ...rest, read: false } }], 'relayed'), env)
}
