import { type MarkedProcess, findMarked } from './marker.js'
import { KILL_GRACE_MS } from './signals.js'
import { procStat } from './table.js'
import { killPids, processTrees } from './tree.js'

/*
 * Reaping a team: every process that carries the team's marker (marker.ts), with its process
 * group and descendants, is stopped (SIGTERM, SIGKILL after the grace), and whatever still
 * carries the marker afterwards is reported as a survivor, never silently left.
 */

/** Rounds of find-and-kill: a process forking while it is being killed is caught by the next one. */
const ROUNDS = 3

export interface ReapReport {
  /** Processes that were signalled and are gone. */
  killed: MarkedProcess[]
  /** Processes that still carry the marker (the caller must not claim the team is gone). */
  survivors: MarkedProcess[]
}

export interface ReapOptions {
  /** Only the processes of these members (`<name>@<team>`); default every one. */
  agentIds?: readonly string[]
  graceMs?: number
}

export async function reapMarked(teamDir: string, opts: ReapOptions = {}): Promise<ReapReport> {
  const killed = new Map<number, MarkedProcess>()
  const ownGroup = procStat('self')?.pgid ?? process.pid
  for (let round = 0; round < ROUNDS; round++) {
    const found = await findMarked(teamDir, opts.agentIds)
    if (found.length === 0) break
    const trees = await processTrees(found.map((p) => p.pid))
    const pids = [...new Set([...trees.values()].flat())]
    // A group is killed only when a marked process leads it: never a group swarm did not start.
    const groups = [...new Set(found.filter((p) => p.pgid === p.pid && p.pgid !== ownGroup).map((p) => p.pgid))]
    await killPids(pids, { graceMs: round === 0 ? (opts.graceMs ?? KILL_GRACE_MS) : 0, groups })
    for (const p of found) killed.set(p.pid, p)
  }
  const survivors = await findMarked(teamDir, opts.agentIds)
  for (const s of survivors) killed.delete(s.pid)
  return { killed: [...killed.values()], survivors }
}
