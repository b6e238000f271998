import { UsageError } from '../errors.js'
import type { Task } from './types.js'

/**
 * The ids in `task.blockedBy` that still block it: a blocker that is completed, or that no longer
 * exists, does not. Completing a task therefore unblocks its dependents without rewriting them,
 * as Claude Code does, and reopening it blocks them again.
 */
export function openBlockers(task: Task, all: ReadonlyArray<Task>): string[] {
  const byId = new Map(all.map((t) => [t.id, t]))
  return task.blockedBy.filter((id) => {
    const blocker = byId.get(id)
    return blocker !== undefined && blocker.status !== 'completed'
  })
}

/** Tasks that `completedId` was blocking and that nothing else blocks any more. */
export function unblockedBy(completedId: string, all: ReadonlyArray<Task>): string[] {
  return all.filter((t) => t.status !== 'completed' && t.blockedBy.includes(completedId) && openBlockers(t, all).length === 0).map((t) => t.id)
}

/**
 * Throws a UsageError when adding the edges `blocker → dependent` would make a task wait on
 * itself, directly or through a chain (such a task could never be claimed).
 */
export function assertNoCycle(all: ReadonlyArray<Task>, edges: ReadonlyArray<{ blocker: string; dependent: string }>): void {
  const next = new Map<string, Set<string>>()
  const add = (from: string, to: string) => {
    if (!next.has(from)) next.set(from, new Set())
    next.get(from)!.add(to)
  }
  for (const t of all) {
    for (const d of t.blocks) add(t.id, d)
    for (const b of t.blockedBy) add(b, t.id)
  }
  for (const e of edges) add(e.blocker, e.dependent)
  for (const e of edges) {
    if (e.blocker === e.dependent) throw new UsageError(`task ${e.dependent} cannot block itself`)
    // A cycle through the new edge exists iff its dependent can reach its blocker.
    const seen = new Set<string>()
    const stack = [e.dependent]
    while (stack.length) {
      const id = stack.pop()!
      if (id === e.blocker) {
        throw new UsageError(`task ${e.blocker} blocking task ${e.dependent} would make a dependency cycle`)
      }
      if (seen.has(id)) continue
      seen.add(id)
      stack.push(...(next.get(id) ?? []))
    }
  }
}

/** A task's owner as a member name: Claude Code may record `name@team`. */
export function ownerName(owner: string | undefined, team: string): string | undefined {
  if (owner === undefined) return undefined
  const suffix = `@${team}`
  return owner.endsWith(suffix) ? owner.slice(0, -suffix.length) : owner
}
