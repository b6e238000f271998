import type { BrokerRequest } from '../permissions/requests/broker.js'

/** A request the human answers at the leader's console. */
export interface ConsoleRequest {
  id: string
  kind: 'permission' | 'plan'
  agent: string
  tool: string
  /** One line: the short input or the plan file. */
  detail: string
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

  /** By id, short id, or a prefix that names exactly one request (an ambiguous one must not pick a request). */
  get(id: string): ConsoleRequest | undefined {
    const exact = this.items.get(id)
    if (exact || !id) return exact
    const matches = [...this.items.values()].filter((r) => r.id.startsWith(id) || shortRequestId(r.id) === id)
    return matches.length === 1 ? matches[0] : undefined
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private changed(): void {
    for (const fn of this.listeners) fn()
  }
}

/** The short id a prompt names: the random tail of `perm-<time>-<hex>` (the whole id when it has no tail). */
export function shortRequestId(id: string): string {
  const tail = /-([0-9a-f]{4,})$/.exec(id)?.[1]
  return tail ?? id
}

/** A pending request as the console shows it. */
export function toConsoleRequest(r: BrokerRequest): ConsoleRequest {
  return {
    id: r.id,
    kind: r.kind,
    agent: r.agent,
    tool: r.toolName,
    detail: r.kind === 'plan' ? (r.planFilePath ?? r.summary) : r.summary,
    suggestions: r.suggestions,
    createdAt: r.createdAt,
  }
}
