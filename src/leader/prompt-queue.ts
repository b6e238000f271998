import { NotFoundError } from '../errors.js'
import type { BrokerRequest } from '../permissions/requests/broker.js'
import { matchRequestId } from '../home/request-id.js'

/** A request the human answers at the leader's console. */
export interface ConsoleRequest {
  id: string
  kind: 'permission' | 'plan'
  agent: string
  tool: string
  /** One line: the whole input (neutralised, uncut) or the plan file. */
  detail: string
  /** The whole input (or plan), neutralised, line by line: what the prompt and `/show` print. */
  inputLines: string[]
  /** Every rule "approve always" adds (a compound command has one per part). */
  suggestions?: string[]
  createdAt: number
}

/**
 * The console's queue of requests: one shown at a time, in arrival order, none lost, none twice.
 * A request answered elsewhere (`swarm perms approve` from any shell) is dropped with `remove`.
 */
export class PromptQueue {
  private readonly items = new Map<string, ConsoleRequest>()
  private readonly listeners = new Set<() => void>()

  add(r: ConsoleRequest): boolean {
    if (this.items.has(r.id)) return false
    this.items.set(r.id, r)
    this.changed()
    return true
  }

  remove(id: string): boolean {
    const had = this.items.delete(id)
    if (had) this.changed()
    return had
  }

  /** Keeps exactly the ids in `pending` (the durable truth on disk) and adds what is new. */
  sync(pending: ConsoleRequest[]): ConsoleRequest[] {
    const ids = new Set(pending.map((p) => p.id))
    let changed = false
    for (const id of [...this.items.keys()]) if (!ids.has(id)) changed = this.items.delete(id) || changed
    const added = pending.filter((p) => !this.items.has(p.id))
    for (const p of added) this.items.set(p.id, p)
    if (changed || added.length) this.changed()
    return added
  }

  get current(): ConsoleRequest | undefined {
    return this.items.values().next().value
  }

  get size(): number {
    return this.items.size
  }

  list(): ConsoleRequest[] {
    return [...this.items.values()]
  }

  /**
   * By id, short id, or a unique prefix of either (request-id.ts): undefined when none is queued;
   * an ambiguous one throws a UsageError naming the candidates — it must not pick a request.
   */
  get(id: string): ConsoleRequest | undefined {
    const exact = this.items.get(id)
    if (exact || !id) return exact
    try {
      return this.items.get(matchRequestId(id, this.items.keys(), 'at this console'))
    } catch (err) {
      if (err instanceof NotFoundError) return undefined
      throw err
    }
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private changed(): void {
    for (const fn of this.listeners) fn()
  }
}

/** A pending request as the console shows it. */
export function toConsoleRequest(r: BrokerRequest): ConsoleRequest {
  return {
    id: r.id,
    kind: r.kind,
    agent: r.agent,
    tool: r.toolName,
    detail: r.kind === 'plan' ? (r.planFilePath ?? r.summary) : r.summary,
    inputLines: r.inputLines,
    suggestions: r.suggestions,
    createdAt: r.createdAt,
  }
}
