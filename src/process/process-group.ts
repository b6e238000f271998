import fs from 'node:fs'

/** Time a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2_000
/** Poll interval while waiting for a group to die. */
const POLL_MS = 25

const liveGroups = new Set<number>()
let exitHookInstalled = false

/**
 * Remembers a process group started by a tool, so `killAllProcessGroups` (the runtime's
 * shutdown path) and the process's exit hook can reap it.
 */
export function trackProcessGroup(pgid: number): void {
  liveGroups.add(pgid)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    // 'exit' handlers must be synchronous: SIGKILL is all that is left at that point.
    process.on('exit', () => {
      for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL')
    })
  }
}

export function untrackProcessGroup(pgid: number): void {
  liveGroups.delete(pgid)
}

/** Kills every process group still tracked (SIGTERM, then SIGKILL after the grace). */
export async function killAllProcessGroups(graceMs = KILL_GRACE_MS): Promise<void> {
  await Promise.all([...liveGroups].map((pgid) => killProcessGroup(pgid, graceMs)))
}

/**
 * SIGTERM to the whole group, wait until no live member is left, SIGKILL after `graceMs`,
 * and wait again (bounded), so the caller returns with the group gone.
 */
export async function killProcessGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  if (signalGroup(pgid, 'SIGTERM') && !(await waitForGroupExit(pgid, graceMs))) {
    signalGroup(pgid, 'SIGKILL')
    await waitForGroupExit(pgid, graceMs)
  }
  untrackProcessGroup(pgid)
}

/** Sends `signal` to the group; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw err
  }
}

async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (isProcessGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  return true
}

/**
 * True while a member of the group is running. Zombies do not count: where PID 1 does not
 * reap orphans (some containers), a killed grandchild stays a zombie forever.
 */
export function isProcessGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (process.platform !== 'linux') return true
  return linuxProcesses().some((p) => p.pgrp === pgid && p.state !== 'Z' && p.state !== 'X')
}

/** True when `pid` no longer runs (gone, or a zombie nobody reaped). */
export function isProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  if (process.platform !== 'linux') return false
  const state = linuxStat(pid)?.state
  return state === undefined || state === 'Z' || state === 'X'
}

interface ProcStat {
  pid: number
  state: string
  pgrp: number
}

function linuxProcesses(): ProcStat[] {
  const out: ProcStat[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = linuxStat(Number(entry))
    if (stat) out.push(stat)
  }
  return out
}

function linuxStat(pid: number): ProcStat | undefined {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined // exited between readdir and read
  }
  // The command name is in parentheses and may itself contain spaces or ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { pid, state: fields[0] ?? '', pgrp: Number(fields[2]) }
}
