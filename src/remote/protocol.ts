import { z } from 'zod'
import { InboxMessage } from '../mailbox/types.js'

/*
 * The remote relay's wire format: one JSON frame a line (util/frame-lines.ts) over the SSH channel
 * between a team's link (local, `swarm remote link`) and its relay on the host (`swarm remote
 * relay`). Each side numbers what it sends (`item`, seq 1, 2, …) and keeps it in its journal until
 * the other side has it; the receiver applies an item once, records the highest seq applied and
 * acks it. Each `hello` names the highest seq applied from the other side, which resends the rest:
 * across any number of reconnects every item is applied exactly once, in order; and its `floor`,
 * the highest seq the other side acked (the sender may have pruned up to it: journal.ts). Frames from the
 * other side are parsed with zod.
 */

/** Bumped on any change of the frames: a link and a relay of different protocols refuse each other. */
export const PROTOCOL = 2

/** What travels: an inbox entry (verbatim, signatures and msg_id kept), a permission request, its answer. */
export const RelayItem = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('entry'), to: z.string(), entry: InboxMessage }),
  z.object({ kind: z.literal('pending'), request: z.looseObject({ id: z.string() }) }),
  z.object({ kind: z.literal('resolved'), request: z.looseObject({ id: z.string() }) }),
])
export type RelayItem = z.infer<typeof RelayItem>

export const RelayFrame = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('hello'),
    version: z.string(),
    protocol: z.number(),
    team: z.string(),
    applied: z.number().int().min(0),
    floor: z.number().int().min(0),
  }),
  z.object({ t: z.literal('item'), seq: z.number().int().min(1), item: RelayItem }),
  z.object({ t: z.literal('ack'), seq: z.number().int().min(1) }),
  /** A remote member's state.json, as its host has it (latest wins: not numbered). */
  z.object({ t: z.literal('state'), name: z.string(), state: z.looseObject({ status: z.string() }) }),
  z.object({ t: z.literal('refuse'), reason: z.string() }),
])
export type RelayFrame = z.infer<typeof RelayFrame>

export function encodeRelayFrame(frame: RelayFrame): string {
  return `${JSON.stringify(frame)}\n`
}

/** The identity of an item at its source, so a source scanned again is never journaled twice. */
export function itemKey(item: RelayItem): string {
  if (item.kind === 'entry') return `entry:${item.to}:${item.entry.msg_id ?? `${item.entry.from}:${item.entry.timestamp}`}`
  return `${item.kind}:${item.request.id}`
}
