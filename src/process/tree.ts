import { isAlive, waitForExit, waitForGroupExit } from './liveness.js'
import { KILL_GRACE_MS, killGroup, sendSignal } from './signals.js'
import { ancestry, isZombieState, procStat, processTable } from './table.js'

/*
 * Process trees and groups: find everything a process started (its group and all descendants,
 * also those that left the group), and stop it — SIGTERM, then SIGKILL after the one grace time.
 * Never this process or its ancestors.
 */

/** Time SIGKILLed processes get to be gone before a kill returns anyway. */
const AFTER_SIGKILL_MS = 500

/**
 * Every live process of `rootPid`'s tree: the root, the members of its process group
 * (pgid = rootPid) and all their descendants (which may have started groups of their own).
 */
export async function processTree(rootPid: number): Promise<number[]> {
  return (await processTrees([rootPid])).get(rootPid) ?? []
}

/** processTree for several roots with one read of the process table. */
export async function processTrees(rootPids: number[]): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>()
  if (rootPids.length === 0) return result
  const all = await processTable()
  const mine = ancestry(all)
  const rows = all.filter((r) => !isZombieState(r.state))
  const live = new Set(rows.map((r) => r.pid))
  const children = new Map<number, number[]>()
  for (const r of rows) children.set(r.ppid, [...(children.get(r.ppid) ?? []), r.pid])
  for (const root of rootPids) {
    const found = new Set<number>()
    const queue = [root, ...rows.filter((r) => r.pgid === root).map((r) => r.pid)]
    while (queue.length) {
      const pid = queue.pop()!
      if (found.has(pid) || pid <= 1 || mine.has(pid) || !live.has(pid)) continue
      found.add(pid)
      queue.push(...(children.get(pid) ?? []))
    }
    result.set(root, [...found])
  }
  return result
}

export interface KillTreeOptions {
  /** Time between SIGTERM and SIGKILL; 0 sends SIGKILL at once. */
  graceMs?: number
  /** The tree, listed beforehand (processTree); listed now when absent. */
  pids?: number[]
}

/**
 * Kills `rootPid`'s whole tree: SIGTERM to every member and to the group, SIGKILL to whatever is
 * left after `graceMs`. List the tree before anything else can signal it: an orphan is
 * re-parented to init and could no longer be found. Resolves with the pids that were signalled.
 */
export async function killTree(rootPid: number, opts: KillTreeOptions = {}): Promise<number[]> {
  const graceMs = opts.graceMs ?? KILL_GRACE_MS
  const pids = opts.pids ?? (await processTree(rootPid))
  await killPids(pids, { graceMs, groups: ownGroup() === rootPid ? [] : [rootPid] })
  return pids
}

/**
 * SIGTERM to `pids` and `groups`, SIGKILL to what lives after `graceMs` (at once when 0), then a
 * short bounded wait. True when everything is gone.
 */
export async function killPids(pids: number[], opts: { graceMs?: number; groups?: number[] } = {}): Promise<boolean> {
  const graceMs = opts.graceMs ?? KILL_GRACE_MS
  const groups = opts.groups ?? []
  const first: NodeJS.Signals = graceMs > 0 ? 'SIGTERM' : 'SIGKILL'
  for (const g of groups) killGroup(g, first)
  for (const pid of pids) sendSignal(pid, first)
  if (graceMs > 0 && (await waitForExit(pids, graceMs))) return true
  for (const g of groups) killGroup(g, 'SIGKILL')
  for (const pid of pids) if (isAlive(pid)) sendSignal(pid, 'SIGKILL')
  return waitForExit(pids, AFTER_SIGKILL_MS)
}

/**
 * Stops the process group `pgid`: SIGTERM to the group, a wait until no live member is left,
 * SIGKILL after `graceMs`, and a bounded wait again, so the caller returns with the group gone.
 */
export async function killProcessGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  if (!killGroup(pgid, 'SIGTERM') || (await waitForGroupExit(pgid, graceMs))) return
  killGroup(pgid, 'SIGKILL')
  await waitForGroupExit(pgid, graceMs)
}

/** This process's own group (Linux); elsewhere undefined, and processTree still spares our ancestors. */
function ownGroup(): number | undefined {
  return procStat('self')?.pgid
}
