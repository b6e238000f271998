import type { KeyObject } from 'node:crypto'
import type { InboxMessage } from '../mailbox/types.js'
import { openOrderLedger, type OrderLedger } from '../mailbox/order-ledger.js'
import { classifyLeadMessage, importPublicKey, loadLeadPublicKey, resolveLeadVerifyKey } from '../mailbox/signing.js'
import { LEAD_NAME } from '../home/paths.js'

/**
 * How a teammate judges an order that claims to come from team-lead: a valid lead signature made
 * for THIS teammate, with an id it has never acted on (its durable order ledger). So a signed
 * order copied to another teammate, or delivered twice, is refused. A verified key update switches keys.
 */

/** How a message that claims to come from the lead checks out. */
export type LeadVerdict = 'verified' | 'unverified' | 'not-lead' | 'replayed'

export class LeadOrders {
  private constructor(
    private readonly team: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly name: string,
    private key: KeyObject | undefined,
    private readonly ledger: OrderLedger,
  ) {}

  /** The teammate `name`'s judge: the key it was launched with (or lead.pub), and its ledger. */
  static async open(team: string, name: string, env: NodeJS.ProcessEnv): Promise<LeadOrders> {
    const [key, ledger] = await Promise.all([resolveLeadVerifyKey(team, env), openOrderLedger(team, name, env)])
    return new LeadOrders(team, env, name, key, ledger)
  }

  /** The verdict on `entry`; `verified` also records its id, so the same order never verifies again. */
  async judge(entry: InboxMessage): Promise<LeadVerdict> {
    let verdict = classifyLeadMessage(entry, this.key, this.name)
    if (verdict === 'unverified' && this.name === LEAD_NAME) {
      // The lead agent lives in the leader, which owns the key files: after `swarm team rekey`,
      // answers to its own requests come signed with the new key, and lead.pub says which it is.
      const current = await loadLeadPublicKey(this.team, this.env).catch(() => undefined)
      if (current !== undefined) {
        this.key = importPublicKey(current)
        verdict = classifyLeadMessage(entry, this.key, this.name)
      }
    }
    if (verdict !== 'verified') return verdict
    return (await this.ledger.claim(entry.msg_id!, entry.timestamp)) ? 'verified' : 'replayed'
  }

  /** Switches to the lead's new public key (from a verified `lead_key_update`). */
  rotate(publicKey: string): void {
    this.key = importPublicKey(publicKey)
  }
}

/** One line for the pane about an order that was not acted on. */
export function refusalReason(verdict: Exclude<LeadVerdict, 'verified'>): string {
  switch (verdict) {
    case 'unverified':
      return 'UNVERIFIED (no valid lead signature)'
    case 'replayed':
      return 'REPLAYED (an order already acted on, or older than the ledger remembers)'
    case 'not-lead':
      return `only ${LEAD_NAME} may send it`
  }
}
