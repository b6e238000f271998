import { z } from 'zod'

/** Largest `text` an inbox message may carry. */
export const MAX_MESSAGE_BYTES = 1024 * 1024

/**
 * One entry of an inbox file (a JSON array), in the shape Claude Code 2.1.332 writes.
 * `msg_id` may be absent (older writers); unknown fields are kept.
 * `leadSig` is swarm's Ed25519 signature over a lead message (see trust/swarm-scheme).
 */
export const InboxMessage = z.looseObject({
  from: z.string(),
  text: z.string(),
  // ISO 8601; an epoch-ms number (described for older Claude Code builds) is read as ISO.
  timestamp: z.union([z.string(), z.number().transform(epochToIso)]),
  read: z.boolean().optional(),
  color: z.string().optional(),
  summary: z.string().optional(),
  type: z.literal('message').optional(),
  msg_id: z.string().optional(),
  msgV: z.number().optional(),
  leadSig: z.string().optional(),
  /** Claude Code's signature over a lead message (see trust/claude-scheme). */
  lead_sig: z.string().optional(),
  /** When the recipient process took the message into its queue (swarm's receipt; see markDelivered). */
  deliveredAt: z.string().optional(),
})
export type InboxMessage = z.infer<typeof InboxMessage>

function epochToIso(ms: number): string {
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString()
}

export const InboxFile = z.array(InboxMessage)

/** sent = in the file; delivered = the recipient process took it; read = its agent consumed it. */
export type MessageState = 'sent' | 'delivered' | 'read'
