import fs from 'node:fs'
import { readProcDir } from './liveness.js'
import { HAS_PROC, ancestry, isZombieState, procStat, processTable, psOutput } from './table.js'

/*
 * The team marker: every process swarm starts for a team carries it in its environment, which
 * survives setsid and double forks, so a team's processes are found after their parent died. It
 * is read from /proc/<pid>/environ on Linux, and from `ps -E` elsewhere (macOS; untested).
 */

/** The team's name. */
export const TEAM_VAR = 'SWARM_TEAM'
/** `<name>@<team>` of the member the process works for. */
export const AGENT_VAR = 'SWARM_AGENT_ID'
/** The team's directory (absolute): names repeat across state roots, directories do not. */
export const TEAM_DIR_VAR = 'SWARM_TEAM_DIR'

export interface TeamMarker {
  team: string
  /** `<name>@<team>`. */
  agentId: string
  /** The team's directory, absolute. */
  teamDir: string
}

/** The variables to put in the environment of a process started for `marker`'s member. */
export function markerEnv(marker: TeamMarker): Record<string, string> {
  return { [TEAM_VAR]: marker.team, [AGENT_VAR]: marker.agentId, [TEAM_DIR_VAR]: marker.teamDir }
}

/** An environment without any marker (for processes that serve every team, like the tmux server). */
export function withoutMarker(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { [TEAM_VAR]: _t, [AGENT_VAR]: _a, [TEAM_DIR_VAR]: _d, ...rest } = env
  return rest
}

export interface MarkedProcess {
  pid: number
  pgid: number
  agentId: string
  /** Its command line, for the report (may be empty). */
  command: string
}

/**
 * Every live process whose marker names the team at `teamDir` (and, when given, one of
 * `agentIds`). This process and its ancestors are never included.
 */
export async function findMarked(teamDir: string, agentIds?: readonly string[]): Promise<MarkedProcess[]> {
  const found = HAS_PROC ? scanProc(teamDir) : await scanPs(teamDir)
  const mine = ancestry(HAS_PROC ? ancestorRows() : await processTable())
  return found.filter((p) => !mine.has(p.pid) && (agentIds === undefined || agentIds.includes(p.agentId)))
}

function scanProc(teamDir: string): MarkedProcess[] {
  const out: MarkedProcess[] = []
  for (const pid of readProcDir()) {
    let environ: string
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1')
    } catch {
      continue // gone, or another user's process
    }
    const vars = parseEnviron(environ)
    if (vars.get(TEAM_DIR_VAR) !== teamDir) continue
    const stat = procStat(pid)
    if (!stat || isZombieState(stat.state)) continue
    out.push({ pid, pgid: stat.pgid, agentId: vars.get(AGENT_VAR) ?? '', command: cmdline(pid) })
  }
  return out
}

function parseEnviron(environ: string): Map<string, string> {
  const vars = new Map<string, string>()
  for (const entry of environ.split('\0')) {
    if (!entry.startsWith('SWARM_')) continue
    const eq = entry.indexOf('=')
    if (eq > 0) vars.set(entry.slice(0, eq), Buffer.from(entry.slice(eq + 1), 'latin1').toString('utf8'))
  }
  return vars
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
  } catch {
    return ''
  }
}

/** This process's ancestors as table rows, read from /proc (no ps needed). */
function ancestorRows() {
  const rows = []
  for (let pid = process.pid, i = 0; pid > 1 && i < 64; i++) {
    const stat = procStat(pid)
    if (!stat) break
    rows.push(stat)
    pid = stat.ppid
  }
  return rows
}

/** macOS: `ps -E` appends the environment (as it was at exec) to the command. Untested. */
async function scanPs(teamDir: string): Promise<MarkedProcess[]> {
  const stdout = await psOutput(['-A', '-E', '-ww', '-o', 'pid=,pgid=,stat=,command='])
  const out: MarkedProcess[] = []
  const dirMark = ` ${TEAM_DIR_VAR}=${teamDir}`
  for (const line of stdout.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line)
    if (!m || isZombieState(m[3]!)) continue
    const rest = m[4]!
    const at = rest.indexOf(dirMark)
    const end = at + dirMark.length
    if (at < 0 || (end < rest.length && rest[end] !== ' ')) continue
    const agent = new RegExp(` ${AGENT_VAR}=(\\S+)`).exec(rest)?.[1] ?? ''
    const envStart = rest.indexOf(` ${TEAM_VAR}=`)
    out.push({ pid: Number(m[1]), pgid: Number(m[2]), agentId: agent, command: envStart < 0 ? rest : rest.slice(0, envStart) })
  }
  return out
}
