import type { KeyObject } from 'node:crypto'
import { LEAD_NAME } from '../home/paths.js'
import { PRIVILEGED_TYPES, parseStructured, type StructuredMessage } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { CLAUDE_LEAD_VERIFY_KEY_ENV, parseClaudeVerifyKey, verifyClaudeLeadEntry, type ClaudeVerifyKey } from './claude-scheme.js'
import { loadLeadPublicKey, resolveLeadVerifyKey } from './keys.js'
import { OrderLedger, orderLedgerPath } from './ledger.js'
import { type RecordKind, verifyRecord } from './record-seal.js'
import { importPublicKey, verifyLeadMessage } from './swarm-scheme.js'

/**
 * The one gate for lead orders, which every inbox consumer calls (swarm's agent, an agent CLI's
 * courier, the leader console): an order counts only with a lead signature made for THIS inbox, in
 * a scheme the member accepts, with an id its durable ledger has never seen. A verified
 * `lead_key_update` replaces the keys of every scheme, so the old key stops counting at once.
 */

/** How a message that claims to come from the lead checks out. */
export type LeadVerdict = 'verified' | 'unverified' | 'not-lead' | 'replayed'

export interface LeadGateOptions {
  team: string
  /** The member whose inbox is judged: every signature must have been made for it. */
  name: string
  env: NodeJS.ProcessEnv
  /**
   * Claude Code's `--lead-verify-key` (`<ms>.<key>`) the member was started with; default
   * `$SWARM_CLAUDE_LEAD_VERIFY_KEY`. Without one, no `lead_sig` counts — never checked with the team's key.
   */
  claudeVerifyKey?: string
  /** The team is led by Claude Code: a member holding no key at all acts on its (unsigned) orders, as its own keyless teammates do. */
  claudeLed?: boolean
  /** Where acted-on order ids are kept; default the member's own ledger (`acted-orders.jsonl`). */
  ledgerFile?: string
}

/** Whether a structured message is an order (it counts only from team-lead, through the gate). */
export function isLeadOrder(message: StructuredMessage | undefined): message is StructuredMessage {
  return message !== undefined && PRIVILEGED_TYPES.has(message.type)
}

export class LeadGate {
  private constructor(
    private readonly options: LeadGateOptions,
    /** swarm's scheme (`leadSig`): `$SWARM_LEAD_VERIFY_KEY` or lead.pub, until a key update. */
    private swarmKey: KeyObject | undefined,
    /** Claude Code's scheme (`lead_sig`): only the key the member was started with, until a key update revokes it. */
    private claudeKey: ClaudeVerifyKey | undefined,
    private readonly keyless: boolean,
    private readonly ledger: OrderLedger,
  ) {}

  static async open(o: LeadGateOptions): Promise<LeadGate> {
    const file = o.ledgerFile ?? orderLedgerPath(o.team, o.name, o.env)
    const [swarmKey, ledger] = await Promise.all([resolveLeadVerifyKey(o.team, o.env), OrderLedger.open(file)])
    const claudeKey = parseClaudeVerifyKey(o.claudeVerifyKey ?? o.env[CLAUDE_LEAD_VERIFY_KEY_ENV])
    const keyless = o.claudeLed === true && swarmKey === undefined && claudeKey === undefined
    return new LeadGate(o, swarmKey, claudeKey, keyless, ledger)
  }

  /**
   * The verdict on an entry that claims team-lead's authority. `verified` records its id first, so
   * the same order never verifies again (another copy, a restart); a verified key update rotates.
   */
  async acceptLeadOrder(entry: InboxMessage): Promise<LeadVerdict> {
    if (entry.from !== LEAD_NAME) return 'not-lead'
    if (this.keyless) return 'verified'
    if (entry.msg_id === undefined || !(await this.signatureHolds(entry))) return 'unverified'
    if (!(await this.ledger.claim(entry.msg_id, entry.timestamp))) return 'replayed'
    this.rotateOn(entry)
    return 'verified'
  }

  /**
   * Whether a record team-lead writes as a file (a resolved request, "always" rules) carries its
   * seal, under the key of swarm's scheme as rotated (the lead's own: lead.pub, as for its orders).
   * A member of a Claude Code lead's team takes records as written (that lead seals nothing).
   */
  /** Whether this member checks the lead's records at all (not in a Claude Code lead's team, which seals nothing). */
  get checksRecords(): boolean {
    return !this.keyless && this.options.claudeLed !== true
  }

  async verifyRecord(kind: RecordKind, record: Record<string, unknown>): Promise<boolean> {
    if (this.keyless || this.options.claudeLed) return true
    if (verifyRecord(this.swarmKey, kind, this.options.team, record)) return true
    // A team that had no key when the member started: the first pair, made when the lead first signed.
    if (this.swarmKey === undefined) this.swarmKey = await resolveLeadVerifyKey(this.options.team, this.options.env).catch(() => undefined)
    if (verifyRecord(this.swarmKey, kind, this.options.team, record)) return true
    if (this.options.name !== LEAD_NAME) return false
    const current = await loadLeadPublicKey(this.options.team, this.options.env).catch(() => undefined)
    return current !== undefined && verifyRecord(current, kind, this.options.team, record)
  }

  private async signatureHolds(entry: InboxMessage): Promise<boolean> {
    if (verifyLeadMessage(this.swarmKey, entry, this.options.name)) return true
    if (this.options.name === LEAD_NAME) {
      // The lead lives in the leader, which owns the key files: after `swarm team rekey`, answers
      // to its own requests come signed with the new key, and lead.pub says which it is.
      const current = await loadLeadPublicKey(this.options.team, this.options.env).catch(() => undefined)
      if (current !== undefined) {
        this.swarmKey = importPublicKey(current)
        if (verifyLeadMessage(this.swarmKey, entry, this.options.name)) return true
      }
    }
    return this.claudeKey !== undefined && verifyClaudeLeadEntry(this.claudeKey, { ...entry, from_plugin: stringField(entry, 'from_plugin') })
  }

  /** A verified `lead_key_update`: the new swarm key, and this member's new Claude-format key or none (the old one revoked). */
  private rotateOn(entry: InboxMessage): void {
    const update = parseStructured(entry.text)
    if (update?.type !== 'lead_key_update') return
    try {
      this.swarmKey = importPublicKey(update.publicKey)
    } catch {
      this.swarmKey = undefined // a key that does not parse: nothing verifies until the next restart
    }
    this.claudeKey = parseClaudeVerifyKey(update.leadVerifyKey)
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

function stringField(entry: InboxMessage, key: string): string | undefined {
  const value = (entry as Record<string, unknown>)[key]
  return typeof value === 'string' ? value : undefined
}
