import fs from 'node:fs'
import { readProcDir } from './liveness.js'
import { isZombieState, procStat } from './table.js'

/*
 * Finding processes by their command line (Linux /proc): for programs swarm did not start and
 * cannot mark, such as the teammates a Claude Code lead launched. Without /proc nothing is found.
 */

export interface ArgvProcess {
  pid: number
  argv: string[]
}

/** A process's argv; undefined when it is gone or not ours to read. */
export function readArgv(pid: number): string[] | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return text ? text.replace(/\0$/, '').split('\0') : undefined
  } catch {
    return undefined
  }
}

/** The value after `flag` in `argv` (`--agent-id w1@t` → `w1@t`). */
export function flagValue(argv: readonly string[], flag: string): string | undefined {
  const at = argv.indexOf(flag)
  return at >= 0 ? argv[at + 1] : undefined
}

/** Every live process (zombies excluded) whose argv `match` accepts; never this process. */
export function processesByArgv(match: (argv: string[]) => boolean): ArgvProcess[] {
  const out: ArgvProcess[] = []
  for (const pid of readProcDir()) {
    if (pid === process.pid) continue
    const argv = readArgv(pid)
    if (!argv || !match(argv)) continue
    const stat = procStat(pid)
    if (stat && !isZombieState(stat.state)) out.push({ pid, argv })
  }
  return out
}
