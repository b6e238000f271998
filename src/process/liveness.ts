import fs from 'node:fs'
import { delay } from './delay.js'
import { HAS_PROC, isZombieState, procStartTime, procStat, processTable } from './table.js'

/*
 * Is it still running? For a pid and for a process group, with zombies counted as gone, and a
 * bounded wait until a set of pids is gone.
 */

/** Poll interval of every wait for processes to go away. */
const POLL_MS = 25

/** True when `pid` is a running process (not a zombie). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  if (!signalReaches(pid)) return false
  if (!HAS_PROC) return true // elsewhere waitForExit asks ps now and then
  const stat = procStat(pid)
  return stat !== undefined && !isZombieState(stat.state)
}

/** True while a member of the group `pgid` is running (zombies do not count). */
export function isGroupAlive(pgid: number): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1 || !signalReaches(-pgid)) return false
  if (!HAS_PROC) return true
  for (const entry of readProcDir()) {
    const stat = procStat(entry)
    if (stat && stat.pgid === pgid && !isZombieState(stat.state)) return true
  }
  return false
}

/** How a process was seen once: its start time and the pid namespace of whoever saw it. */
export interface ProcessSighting {
  pid: number
  /** procStartTime(pid) when it was seen. */
  started: string
  /** `/proc/self/ns/pid` of the process that saw it: pids mean something only in their namespace. */
  pidNs: string
}

/** The sighting of a live `pid`, as this process sees it; undefined when it cannot see it (or without /proc). */
export function sightProcess(pid: number): ProcessSighting | undefined {
  const started = procStartTime(pid)
  const pidNs = pidNamespace()
  return started !== undefined && pidNs !== undefined ? { pid, started, pidNs } : undefined
}

/**
 * True only when the process once sighted is surely gone: looked up from the same pid namespace,
 * kill(0) says ESRCH, or its /proc entry is a zombie or names another start time (a reused pid).
 * From another namespace (a sandbox), without /proc, or when its entry cannot be read: false.
 */
export function sightedProcessGone(s: ProcessSighting): boolean {
  if (!Number.isInteger(s.pid) || s.pid <= 0 || !HAS_PROC || pidNamespace() !== s.pidNs) return false
  try {
    process.kill(s.pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH'
  }
  const stat = procStat(s.pid)
  if (stat === undefined) return false // exists, but its entry is hidden (hidepid) or it just went
  return isZombieState(stat.state) || procStartTime(s.pid) !== s.started
}

/** This process's pid namespace (`pid:[4026531836]`); undefined without a readable /proc. */
export function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync('/proc/self/ns/pid')
  } catch {
    return undefined
  }
}

/** True when a process `pid` exists, zombies included (EPERM: it exists but belongs to someone else). */
export function pidExists(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0 && signalReaches(pid)
}

/** kill(target, 0): EPERM means it exists (another user's process), ESRCH that it does not. */
function signalReaches(target: number): boolean {
  try {
    process.kill(target, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Numeric entries of /proc. */
export function readProcDir(): number[] {
  if (!HAS_PROC) return []
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
}

/** Polls until none of `pids` is alive; false on timeout (or abort). */
export async function waitForExit(pids: number[], timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (let round = 1; ; round++) {
    let alive = pids.filter(isAlive)
    // Without /proc, zombies look alive to kill(0): ask ps now and then.
    if (alive.length && !HAS_PROC && round % 4 === 0) {
      const running = new Set((await processTable()).filter((r) => !isZombieState(r.state)).map((r) => r.pid))
      alive = alive.filter((pid) => running.has(pid))
    }
    if (alive.length === 0) return true
    if (Date.now() >= deadline || signal?.aborted) return false
    await delay(Math.min(POLL_MS, Math.max(1, deadline - Date.now())), signal)
  }
}

/** Polls until no member of the group is alive; false on timeout. */
export async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (isGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false
    await delay(POLL_MS)
  }
  return true
}
