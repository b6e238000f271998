import fs from 'node:fs/promises'
import path from 'node:path'
import { ExitCode, SwarmError } from '../errors.js'
import { agentId, teamConfigPath, teamDir, teamsDir } from '../home/paths.js'
import { runningLeader } from './leader-lock.js'
import { delay } from '../process/delay.js'
import { isAlive } from '../process/liveness.js'
import type { MarkedProcess } from '../process/marker.js'
import { type ReapReport, reapMarked } from '../process/reap.js'
import { type ContainedProcess, reapContained } from '../process/containment.js'
import { sendSignal } from '../process/signals.js'
import { killTree } from '../process/tree.js'
import { pathExists } from '../util/fs.js'
import type { Env } from '../home/env.js'

/*
 * Finding and stopping every process of a team, whatever its config says: the leader by its
 * lock file, everything else by the marker in its environment (process/marker.ts) and, where
 * the system has cgroups, by its member's cgroup, which no environment change leaves
 * (process/containment.ts). Used by
 * `team delete`, `team resume` and `kill`; a survivor is an error, never a silent leftover.
 */

/** How long a leader gets to take its in-process teammates down after SIGTERM. */
const LEADER_STOP_MS = 5_000

/** One reaped process, for reports. */
export interface ReapedProcess {
  pid: number
  /** The member it worked for (`bob`), or '' when its marker named none. */
  agent: string
  command: string
}

/** Stops the team's processes (all, or those of `names`); returns what was killed and what survived. */
export async function reapTeam(team: string, env: Env, names?: readonly string[]): Promise<{ killed: ReapedProcess[]; survivors: ReapedProcess[] }> {
  const report: ReapReport = await reapMarked(teamDir(team, env), names ? { agentIds: names.map((n) => agentId(n, team)) } : {})
  // Then what the marker cannot find (a child that cleared its environment): the members' cgroups.
  const contained = await reapContained(teamDir(team, env), env, names ? { members: names } : {})
  const marked = new Set(report.killed.map((p) => p.pid))
  const byCgroup = (p: ContainedProcess): ReapedProcess => ({ pid: p.pid, agent: p.member, command: p.command })
  return {
    killed: [...report.killed.map(describe), ...contained.killed.filter((p) => !marked.has(p.pid)).map(byCgroup)],
    survivors: [...report.survivors.map(describe), ...contained.survivors.map(byCgroup)],
  }
}

function describe(p: MarkedProcess): ReapedProcess {
  return { pid: p.pid, agent: p.agentId.slice(0, Math.max(0, p.agentId.lastIndexOf('@'))), command: p.command }
}

/** Refuses to go on while processes of the team survive (exit 8, naming them). */
export function assertNoneSurvive(team: string, survivors: ReapedProcess[], consequence: string): void {
  if (survivors.length === 0) return
  const list = survivors.map((p) => `pid ${p.pid}${p.agent ? ` (${p.agent})` : ''}`).join(', ')
  throw new SwarmError(
    'SWARM_PROCESSES_SURVIVE',
    `${survivors.length} process(es) of team ${team} still run after SIGKILL: ${list}; ${consequence}`,
    {
      exitCode: ExitCode.processFailure,
      hint: `stop them yourself (they may belong to another user), then run the command again`,
    },
  )
}

/**
 * Stops the team's leader process when it is not this one (an in-process team lives inside it):
 * SIGTERM, a wait for it to take its teammates down, then its whole tree. Found by the leader
 * lock, else by the pid in its state file. Returns its pid when it was running.
 */
export async function stopLeaderProcess(team: string, env: Env, statePid?: number): Promise<number | undefined> {
  const pid = runningLeader(team, env) ?? statePid
  if (pid === undefined || pid === process.pid || !isAlive(pid)) return undefined
  sendSignal(pid, 'SIGTERM')
  for (const deadline = Date.now() + LEADER_STOP_MS; isAlive(pid) && Date.now() < deadline; ) await delay(100)
  if (isAlive(pid)) await killTree(pid)
  return pid
}

/**
 * Keeps a corrupt config.json of a team being deleted: moved to `teams/<team>.config.json.corrupt-<time>`
 * (beside the team directory, which goes, so a new team of that name can be made). Returns where.
 */
export async function keepCorruptConfig(team: string, env: Env): Promise<string | undefined> {
  const file = teamConfigPath(team, env)
  if (!(await pathExists(file))) return undefined
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  let target = path.join(teamsDir(env), `${team}.config.json.corrupt-${stamp}`)
  for (let i = 1; await pathExists(target); i++) target = path.join(teamsDir(env), `${team}.config.json.corrupt-${stamp}-${i}`)
  await fs.rename(file, target)
  return target
}
