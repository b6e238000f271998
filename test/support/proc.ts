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

/**
 * `pid argv` of every process whose environment holds every one of `entries` (e.g.
 * `SWARM_HOME=/tmp/x/home`): what a test left running. A team name alone is not the test's own —
 * a swarm run beside the suite may use it too — so give its SWARM_HOME as well.
 */
export function processesWithEnv(...entries: string[]): string[] {
  const found: string[] = []
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
      if (entries.every((e) => env.includes(e))) found.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`)
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found
}
