import fs from 'node:fs'
import { childProcess } from './child-process.js'

/*
 * Reading the process table: one process's state from /proc (Linux), or every process with
 * `ps` (Linux and macOS). Zombies count as gone everywhere: where PID 1 does not reap orphans
 * (containers) a killed orphan stays a zombie forever.
 */

export const HAS_PROC = fs.existsSync('/proc/self/stat')
/** Limit for the one `ps` call of a table read. */
const PS_TIMEOUT_MS = 5_000

export interface ProcRow {
  pid: number
  ppid: number
  pgid: number
  /** First letter of the state: R, S, D, T, Z, X… */
  state: string
}

/** `/proc/<pid>/stat` parsed; undefined when the process is gone (or without /proc). */
export function procStat(pid: number | 'self'): ProcRow | undefined {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined // gone between two looks, or no /proc here
  }
  // The command name is in parentheses and may itself contain spaces or ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { pid: pid === 'self' ? process.pid : pid, state: f[0] ?? '', ppid: Number(f[1]), pgid: Number(f[2]) }
}

/**
 * When `pid` started (clock ticks since boot, Linux): with the pid it names one process for good,
 * since pids are reused. Undefined when it is gone or without /proc.
 */
export function procStartTime(pid: number): string | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

export function isZombieState(state: string): boolean {
  return state.startsWith('Z') || state.startsWith('X')
}

/** Every process (zombies included), from one `ps` run; empty when ps cannot run. */
export async function processTable(): Promise<ProcRow[]> {
  const out = await psOutput(['-A', '-o', 'pid=,ppid=,pgid=,stat='])
  const rows: ProcRow[] = []
  for (const line of out.split('\n')) {
    const [pid, ppid, pgid, state] = line.trim().split(/\s+/)
    if (!pid || !state) continue
    rows.push({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), state })
  }
  return rows
}

/** Pids of this process and its ancestors: never signalled by a tree or marker kill. */
export function ancestry(rows: ProcRow[]): Set<number> {
  const byPid = new Map(rows.map((r) => [r.pid, r]))
  const mine = new Set<number>()
  for (let pid: number | undefined = process.pid; pid && pid > 1 && !mine.has(pid); pid = byPid.get(pid)?.ppid) mine.add(pid)
  return mine
}

/**
 * What `ps args` printed ('' when it cannot run or fails); SIGKILLed after PS_TIMEOUT_MS. Plain
 * execFile: it runs below launch.ts, which reads this table to stop process trees; node:child_process
 * at the first `ps` (child-process.ts).
 */
export async function psOutput(args: string[]): Promise<string> {
  const { execFile } = childProcess()
  return new Promise((resolve) => {
    execFile('ps', args, { timeout: PS_TIMEOUT_MS, killSignal: 'SIGKILL', encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (_err, stdout) => {
      // A failed or killed ps leaves what it printed, if anything: the callers read the rows there are.
      resolve(typeof stdout === 'string' ? stdout : '')
    }).stdin?.end()
  })
}
