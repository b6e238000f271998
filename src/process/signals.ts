import os from 'node:os'

/*
 * The process module's constants and its one signal policy: how long a process gets between
 * SIGTERM and SIGKILL, what exit code a signal stands for, and what "the target is gone" means.
 */

/**
 * How long a process (or group) gets between SIGTERM and SIGKILL, everywhere in swarm: tree and
 * group kills, `LaunchedProcess.stop`, team reaps, an agent CLI's wrapper (its last resort after
 * the CLI's own quit, and the sweep of what the CLI left in its pane). Long enough for a Node
 * program's SIGTERM handler to flush and remove its files, short enough that `swarm kill` and
 * Ctrl-C feel immediate. Callers pass another grace only where a program's own contract names one
 * (an adapter's `quit.graceMs`).
 */
export const KILL_GRACE_MS = 1_000
/** Hard limit for every cleanup when swarm itself exits or is interrupted. */
export const CLEANUP_TIME_LIMIT_MS = 3_000

/** The signals swarm treats as "stop": they drain what it started, then exit. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const
export type StopSignal = (typeof STOP_SIGNALS)[number]

/** The shell's convention: a process ended by signal N exits 128 + N (SIGINT 130, SIGTERM 143). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0)
}

/**
 * Sends `signal` to `target` (a pid, or `-pgid` for a whole group). The one ESRCH policy: a
 * target that no longer exists (ESRCH), or one that is no longer ours (EPERM: its pid was reused
 * by another user's process), is "nothing to stop" and gives false; anything else is a bug and
 * throws. Never signals pid 0, 1 or -1 (this group, init, everyone).
 */
export function sendSignal(target: number, signal: NodeJS.Signals | 0): boolean {
  if (!Number.isInteger(target) || Math.abs(target) <= 1) return false
  try {
    process.kill(target, signal)
    return true
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ESRCH' || code === 'EPERM') return false
    throw err
  }
}

/** Sends `signal` to the process group `pgid`; false when the group is gone. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGTERM'): boolean {
  return pgid > 1 && sendSignal(-pgid, signal)
}
