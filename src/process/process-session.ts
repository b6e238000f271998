/**
 * The processes of one terminal session (Linux /proc: field 6 of stat). A tmux pane's command is
 * its session's leader, so whatever an agent CLI leaves behind in its pane — a re-exec'd child, a
 * helper that ignores SIGHUP — is found by session id, even after its parent died.
 */
import fs from 'node:fs'

/** Pids whose session is `sid`, other than this process; [] without /proc. */
export function sessionProcesses(sid: number): number[] {
  let names: string[]
  try {
    names = fs.readdirSync('/proc')
  } catch {
    return []
  }
  const out: number[] = []
  for (const n of names) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue
    try {
      const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // fields[0] is the state (field 3); the session id is field 6.
      if (fields[0] !== 'Z' && Number(fields[3]) === sid) out.push(Number(n))
    } catch {
      // the process ended while we looked
    }
  }
  return out
}

/** This process's session id; undefined without /proc. */
export function ownSession(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3])
  } catch {
    return undefined
  }
}
