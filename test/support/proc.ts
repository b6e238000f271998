/**
 * What a test may read of a process it started: whether a forked pid has exec'd its program yet.
 * Right after a fork, /proc shows the parent's command line and environment until the exec.
 */
import fs from 'node:fs'

/** True once `pid` runs `program` (its argv[0]); false before its exec, and once it is gone. */
export function runsProgram(pid: number, program: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith(`${program}\0`)
  } catch {
    return false
  }
}
