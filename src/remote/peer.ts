import { lineReader } from '../util/frame-lines.js'
import type { Journal } from './journal.js'
import { PROTOCOL, type RelayFrame, RelayFrame as RelayFrameSchema, type RelayItem, encodeRelayFrame } from './protocol.js'

/*
 * One end of the relay's exactly-once exchange (remote/protocol.ts), the same for the link and the
 * relay: hello with what it applied, resend what the other side lacks, apply each item once in
 * order and ack it, forget nothing before its ack. What an item does is the side's `apply`.
 */

export interface PeerSide {
  team: string
  version: string
  journal: Journal
  /** Writes one item into this side's files; idempotent (an item may come again after a crash between apply and record). */
  apply(item: RelayItem): Promise<void>
  /** A state frame (the link only). */
  onState?(name: string, state: Record<string, unknown>): Promise<void>
  /** The other side refused, or sent what cannot be read: the channel is to be closed. */
  onFailure(why: string): void
}

export class RelayPeer {
  private open = false
  private heard = false
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly side: PeerSide,
    private readonly write: (text: string) => void,
  ) {}

  /** Sends hello; call once the channel is up. */
  start(): void {
    const { journal } = this.side
    this.send({ t: 'hello', version: this.side.version, protocol: PROTOCOL, team: this.side.team, applied: journal.applied, floor: journal.acked })
  }

  /** Whether the other side's hello was taken (the exchange got under way on this channel). */
  get opened(): boolean {
    return this.heard
  }

  /** The chunk reader for the channel's incoming bytes. */
  reader(): (chunk: Buffer) => void {
    return lineReader(
      (line) => {
        let frame: RelayFrame
        try {
          frame = RelayFrameSchema.parse(JSON.parse(line))
        } catch (err) {
          this.side.onFailure(`an unreadable relay frame: ${(err as Error).message.split('\n')[0]}`)
          return
        }
        // Frames are handled one after the other: applying is asynchronous and order is the contract.
        this.queue = this.queue.then(() => this.handle(frame)).catch((err: unknown) => this.side.onFailure((err as Error).message))
      },
      (err) => this.side.onFailure(err.message),
    )
  }

  /** Journals `item` (durable first) and sends it when the channel is open; later items wait in the journal otherwise. */
  async post(item: RelayItem): Promise<void> {
    const seq = await this.side.journal.append(item)
    if (seq !== undefined && this.open) this.send({ t: 'item', seq, item })
  }

  sendState(name: string, state: Record<string, unknown> & { status: string }): void {
    if (this.open) this.send({ t: 'state', name, state })
  }

  private send(frame: RelayFrame): void {
    this.write(encodeRelayFrame(frame))
  }

  private async handle(frame: RelayFrame): Promise<void> {
    switch (frame.t) {
      case 'hello':
        if (frame.protocol !== PROTOCOL || frame.version !== this.side.version) {
          const reason = `swarm ${frame.version} (relay protocol ${frame.protocol}) on the other side, ${this.side.version} (protocol ${PROTOCOL}) here`
          this.send({ t: 'refuse', reason })
          this.side.onFailure(reason)
          return
        }
        if (frame.team !== this.side.team) {
          this.side.onFailure(`the other side relays team ${frame.team}, not ${this.side.team}`)
          return
        }
        // What the other side pruned (we acked it once) and we no longer have applied: our files
        // were made again since (a mirror started afresh). It cannot be sent again; we start past it.
        if (frame.floor > this.side.journal.applied) await this.side.journal.setApplied(frame.floor)
        this.open = true
        this.heard = true
        for (const l of this.side.journal.after(frame.applied)) this.send({ t: 'item', seq: l.seq, item: l.item })
        return
      case 'item': {
        const applied = this.side.journal.applied
        // Past the next one: an item is missing before it (never on one ordered channel); the next hello resends from `applied`.
        if (frame.seq > applied + 1) return
        if (frame.seq === applied + 1) {
          await this.side.apply(frame.item)
          await this.side.journal.setApplied(frame.seq)
        }
        this.send({ t: 'ack', seq: frame.seq })
        return
      }
      case 'ack':
        await this.side.journal.setAcked(frame.seq)
        return
      case 'state':
        await this.side.onState?.(frame.name, frame.state)
        return
      case 'refuse':
        this.side.onFailure(`the other side refused: ${frame.reason}`)
        return
    }
  }
}
