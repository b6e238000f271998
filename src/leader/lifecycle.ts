import fs from 'node:fs/promises'
import { readMemberState } from '../store/member-state.js'
import { defaultLeaderArgv, teammateEnv } from '../backends/teammate-launch.js'
import { systemDetectInputs } from '../backends/detect.js'
import { selectBackend } from '../backends/detect.js'
import { createExecutor, showsHostedTeammates } from '../backends/registry.js'
import { stopTeamMembers } from '../supervisor/stop.js'
import { spawnTeammates, type SpawnTeammateInput } from '../supervisor/teammates.js'
import type { BackendChoice } from '../backends/types.js'
import { ConflictError, CorruptFileError, NotFoundError, UsageError } from '../errors.js'
import { ensureTeamKeys } from '../trust/keys.js'
import { teamLeadSigner } from '../trust/sign.js'
import { LEAD_NAME, tasksDir, teamDir } from '../home/paths.js'
import { removeFromRoster } from '../tasks/roster.js'
import { deleteTeamFiles, findMember, readTeam, updateTeam } from '../teams/team-store.js'
import type { BackendType } from '../backends/types.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import { pathExists } from '../util/fs.js'
import { REMOTE_HOME_CWD } from '../remote/host.js'
import { definedOnly } from '../util/object.js'
import { delay } from '../process/delay.js'
import { isAlive } from '../process/liveness.js'
import { type ReapedProcess, assertNoneSurvive, keepCorruptConfig, reapTeam, stopLeaderProcess } from '../supervisor/reap-team.js'
import { connectionTo } from '../remote/connection.js'
import { type TeardownReport, listTeamWorktrees, localRepoDirs, teamWorktreesOf, teardownWorktrees } from '../worktrees/team-worktrees.js'
import type { RemoveWorktreeOptions } from '../worktrees/worktree.js'
import { removeGoneClaudeLeadSocket } from '../backends/claude-lead-server.js'
import { claudeLeadAlive, claudeLeadOf } from '../teams/claude-lead.js'
import { HOSTED_VIEWS_FIELD, type PaneMode, hostsTeammates } from '../teams/hosting.js'
import { endGoneLeadKeyHolders } from '../supervisor/lead-key-holders.js'
import { recordLeaderServer } from './leader-server.js'
import type { Env } from '../home/env.js'

export interface StartedTeam {
  backend: BackendType
  /** Why this backend (detection's explanation). */
  reason: string
  leaderPane?: string
  teammates: Array<{ name: string; pane: string }>
  /** The teammates run inside the leader's process, each pane showing one (`--hosted`, or auto above HOSTED_ABOVE). */
  hosted?: boolean
}

/**
 * `--hosted` and `--isolated` say how teammates run in panes: refused where the team would have
 * none (the in-process backend, chosen or detected), never quietly run another way.
 */
export function refusePaneModeWithoutPanes(panes: PaneMode | undefined, detection: { backend: string; reason: string }): void {
  if (panes === undefined || panes === 'auto' || showsHostedTeammates(detection.backend)) return
  const flag = `--${panes}`
  const what = panes === 'hosted' ? 'shows teammates in tmux panes' : 'gives each teammate a process in a pane'
  throw new UsageError(`${flag} ${what}, but this team would run on ${detection.backend} (${detection.reason})`, {
    hint: `use --backend tmux, or leave out ${flag}`,
  })
}

/**
 * Starts a team that was just written: with a pane backend, the leader console in the left pane
 * and one pane per teammate (each with its prompt in its inbox); with the in-process backend
 * nothing here — the caller runs the leader in the foreground. The backend is recorded in the
 * TeamFile so `resume` and the leader find it again.
 */
export async function startTeam(team: string, opts: { backend: BackendChoice; env: Env; panes?: PaneMode }): Promise<StartedTeam> {
  const env = opts.env
  const detection = await selectBackend(opts.backend, systemDetectInputs(env))
  const paneViews = showsHostedTeammates(detection.backend)
  refusePaneModeWithoutPanes(opts.panes, detection)
  const choice = hostsTeammates(
    opts.panes ?? 'auto',
    (await readTeam(team, env)).members.filter((m) => m.name !== LEAD_NAME),
    paneViews,
  )
  await ensureTeamKeys(team, env)
  const config = await updateTeam(
    team,
    (t) => {
      // Hosted: the teammates run inside the leader (in-process), which runs in a pane and shows each in one.
      t.swarmBackend = choice.hosted ? 'in-process' : detection.backend
      if (choice.hosted) t[HOSTED_VIEWS_FIELD] = detection.backend
    },
    env,
  )
  if (detection.backend === 'in-process') return { backend: 'in-process', reason: detection.reason, teammates: [] }
  const executor = createExecutor(detection.backend, { env, sign: await teamLeadSigner(team, env) })
  const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  const leader = await executor.ensureSession(team, { argv: defaultLeaderArgv(team), cwd: leadCwd, env: teammateEnv(env, { team, name: LEAD_NAME }) })
  await recordLeaderServer(team, leader, env)
  if (choice.hosted) {
    // The leader, once up in its pane, starts every teammate inside itself and opens their panes.
    const names = config.members.filter((m) => m.name !== LEAD_NAME).map((m) => ({ name: m.name, pane: 'hosted' }))
    return {
      backend: detection.backend,
      reason: `${detection.reason}; ${choice.why}`,
      leaderPane: leader.paneId,
      teammates: names,
      hosted: true,
    }
  }
  const inputs: SpawnTeammateInput[] = config.members
    .filter((m) => m.name !== LEAD_NAME)
    .map((m) => ({
      name: m.name,
      ...definedOnly({ prompt: m.prompt, agentType: m.agentType, agent: m.agent, model: m.model, mode: m.mode, cwd: hostCwd(m), host: m.host }),
      // A member that has its worktree already (the roster was started before) runs in it.
      ...(m.worktreePath ? { cwd: m.worktreePath } : m.worktree !== undefined ? { worktree: m.worktree } : {}),
    }))
  const results = inputs.length ? await spawnTeammates(team, inputs, { env, executor }) : []
  return {
    backend: detection.backend,
    reason: detection.reason,
    leaderPane: leader.paneId,
    teammates: results.map((r) => ({ name: r.member.name, pane: r.spawned.paneId })),
  }
}

/** A member's cwd to start it in: on a host, `~` is that host's HOME (its swarm's default), so none is sent. */
export function hostCwd(m: TeamMember): string | undefined {
  return m.host !== undefined && m.cwd === REMOTE_HOME_CWD ? undefined : m.cwd
}

/** How long `team delete` waits for teammates to accept the shutdown, by default. */
export const DELETE_TIMEOUT_MS = 15_000

export interface DeleteReport {
  team: string
  /** Accepted the shutdown request and exited. */
  exited: string[]
  /** Teammates of a gone Claude Code lead, ended with SIGTERM (they obey only that lead's signature); absent when none. */
  signalled?: string[]
  killed: string[]
  /** Every process of the team that was still running and was stopped (found by its marker). */
  processes: ReapedProcess[]
  /** Where a corrupt config.json was kept (deleted with --force). */
  keptConfig?: string
  /** The socket file of a gone Claude Code lead's `claude-swarm-<pid>` tmux server, removed (no server answered on it). */
  tmuxSocketRemoved?: string
  /** The team's worktrees: removed (nothing to lose), kept (uncommitted or unmerged work), discarded. */
  worktrees: TeardownReport
}

/** Members in the middle of a turn (working, or waiting for an answer) whose process lives. */
export async function busyMembers(team: TeamFile, env: Env): Promise<Array<{ name: string; status: string; task?: string }>> {
  const busy: Array<{ name: string; status: string; task?: string }> = []
  const claudeLed = claudeLeadOf(team) !== undefined
  for (const m of team.members) {
    if (m.name === LEAD_NAME) continue
    const state = await readMemberState(team.name, m.name, env).catch(() => undefined)
    // Claude Code writes no state file; it sets isActive on its member entry while it works.
    if (!state && m.isActive === true && (m.ownsInbox === true || claudeLed)) {
      busy.push({ name: m.name, status: 'working' })
      continue
    }
    if (!state || (state.status !== 'working' && state.status !== 'waiting')) continue
    if (state.pid === undefined || !isAlive(state.pid)) continue
    busy.push({ name: m.name, status: state.status, ...(state.currentTask ? { task: state.currentTask } : {}) })
  }
  return busy
}

/**
 * `swarm team delete`: refuses (without force) while a teammate is mid-turn, and while a Claude
 * Code lead of the team lives; ends the teammates of a gone Claude Code lead that hold its key
 * with SIGTERM (lead-key-holders.ts); sends every other teammate a shutdown_request, waits up to `timeoutMs`, kills what is left, closes panes and the session,
 * stops an in-process team's leader, removes the team's worktrees that hold nothing to lose (the
 * others are kept and reported, or destroyed with `discard`), and removes the team's files. Leaves no process, pane, lock
 * or temp file behind.
 */
export async function deleteTeamFully(
  team: string,
  opts: {
    env: Env
    force?: boolean
    timeoutMs?: number
    progress?: (line: string) => void
    discard?: boolean
    onDiscard?: RemoveWorktreeOptions['onDiscard']
    /** Copy the team's directory here once no process of the team runs any more, before it is removed (`swarm demo --keep`). */
    copyTo?: string
  },
): Promise<DeleteReport> {
  const env = opts.env
  if (!(await pathExists(teamDir(team, env))) && !(await pathExists(tasksDir(team, env)))) {
    throw new NotFoundError(`no team named ${JSON.stringify(team)}`, { hint: 'see "swarm team list"' })
  }
  let config: TeamFile | undefined
  let corrupt = false
  try {
    config = await readTeam(team, env)
  } catch (err) {
    if (!(err instanceof NotFoundError || (err instanceof CorruptFileError && opts.force))) throw err
    corrupt = err instanceof CorruptFileError
  }
  const claudeLead = config ? claudeLeadOf(config) : undefined
  if (claudeLead && claudeLeadAlive(claudeLead)) {
    throw new ConflictError(
      'SWARM_CLAUDE_LEAD_RUNNING',
      `team ${team} is led by a Claude Code session that is still running (pid ${claudeLead.pid})`,
      {
        hint: 'end it in Claude Code: ask its lead to shut its teammates down, then exit that session (Claude Code cleans up its own team); swarm deletes it once the session is gone',
      },
    )
  }
  if (config && !opts.force) {
    const busy = await busyMembers(config, env)
    if (busy.length) {
      throw new ConflictError(
        'SWARM_TEAM_BUSY',
        `teammates are mid-turn: ${busy.map((b) => `${b.name} (${b.status}${b.task ? `, task #${b.task}` : ''})`).join(', ')}`,
        {
          hint: `wait for them to go idle (swarm status ${team}), or delete at once with --force`,
        },
      )
    }
  }
  const started = Date.now()
  const ticker = opts.progress
    ? setInterval(() => opts.progress!(`waiting for teammates to shut down… ${Math.round((Date.now() - started) / 1000)}s`), 1_000)
    : undefined
  let report = { exited: [] as string[], killed: [] as string[] }
  // The lead is gone (checked above) and its teammates trust only its signature: ended at once, not asked.
  const keyHolders = config
    ? await endGoneLeadKeyHolders(config, opts.force ? { graceMs: 0 } : {})
    : { signalled: [] as string[], killed: [] as string[] }
  try {
    // Claude Code's lead holds its own keys: swarm cannot sign for it (and writes no key of its own there: `claude-lead`).
    if (config)
      report = await stopTeamMembers(team, {
        env,
        graceful: !opts.force,
        timeoutMs: opts.timeoutMs ?? DELETE_TIMEOUT_MS,
        skip: [...keyHolders.signalled, ...keyHolders.killed],
      })
    else {
      // No readable config (corrupt, with --force): nothing to ask, but its tmux session still goes.
      await createExecutor('tmux', { env })
        .stopTeam(team)
        .catch(() => undefined)
    }
    // An in-process team lives inside its leader process: stop that process (and its children).
    // Found by its lock file, so a corrupt config does not hide it.
    const lead = config ? await readMemberState(team, LEAD_NAME, env).catch(() => undefined) : undefined
    await stopLeaderProcess(team, env, lead?.status !== 'exited' ? lead?.pid : undefined)
  } finally {
    clearInterval(ticker)
  }
  // Whatever still carries the team's marker (an orphaned Bash command, a double fork, the agents
  // and leader of an unreadable config) is stopped; the team is not deleted while any survives.
  const reaped = await reapTeam(team, env)
  assertNoneSurvive(team, reaped.survivors, 'the team was not deleted')
  // Only now: a copy taken while an agent still wrote (a state.json renamed over, a lock let go) ends half done.
  if (opts.copyTo) await fs.cp(teamDir(team, env), opts.copyTo, { recursive: true })
  const keptConfig = corrupt ? await keepCorruptConfig(team, env) : undefined
  // Every worktree of the team, also ones swarm has no record of (found by branch in the members' repositories).
  const listing = await listTeamWorktrees(team, { env, repoDirs: localRepoDirs(config?.members ?? []) })
  const worktrees = await teardownWorktrees(listing.worktrees, {
    env,
    ...(opts.discard ? { discard: true } : {}),
    ...(opts.onDiscard ? { onDiscard: opts.onDiscard } : {}),
  })
  worktrees.problems.unshift(...listing.problems)
  // A host's worktree was fetched through its connection again after the team stopped there: its master goes now too.
  for (const host of new Set(listing.worktrees.flatMap((w) => (w.host ? [w.host] : []))))
    await connectionTo(host, env)
      .close()
      .catch(() => undefined) // none running: nothing to end
  await deleteTeamFiles(team, env)
  // Its teammates ended, a gone Claude Code lead's own tmux server has exited: its socket file goes too.
  const tmuxSocketRemoved = config ? await removeGoneClaudeLeadSocket(config, env) : undefined
  return {
    team,
    exited: report.exited,
    ...(keyHolders.signalled.length ? { signalled: keyHolders.signalled } : {}),
    killed: [...keyHolders.killed, ...report.killed],
    processes: reaped.killed,
    ...(keptConfig ? { keptConfig } : {}),
    ...(tmuxSocketRemoved ? { tmuxSocketRemoved } : {}),
    worktrees,
  }
}

/**
 * Removes a stopped teammate from the team (`swarm kill --remove`): its open tasks go back to
 * pending, and its worktree is torn down like on team delete — removed when it holds nothing to
 * lose, else kept and reported (or destroyed with `discard`).
 */
export async function removeTeammate(
  team: string,
  name: string,
  opts: { env: Env; discard?: boolean; onDiscard?: RemoveWorktreeOptions['onDiscard']; waitMs?: number },
): Promise<TeardownReport> {
  const config = await readTeam(team, opts.env)
  const member = findMember(config, name)
  // Its worktree must not go while it still works there (an in-process teammate stops when its leader gets to it).
  if (!(await agentStopped(team, member.name, opts.env, opts.waitMs ?? 0))) {
    throw new ConflictError('SWARM_TEAMMATE_RUNNING', `${member.name} is still running, so it was not removed`, {
      hint: `try again once "swarm status ${team}" shows it exited`,
    })
  }
  await removeFromRoster(team, member.name, opts.env)
  const listing = await teamWorktreesOf(team, { env: opts.env, members: [member], repoDirs: localRepoDirs([member]) })
  const report = await teardownWorktrees(listing.worktrees, {
    env: opts.env,
    ...(opts.discard ? { discard: true } : {}),
    ...(opts.onDiscard ? { onDiscard: opts.onDiscard } : {}),
  })
  report.problems.unshift(...listing.problems)
  return report
}

/** Whether the agent's process has stopped (its state says exited, or its process is gone), waiting up to `waitMs`. */
async function agentStopped(team: string, name: string, env: Env, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const state = await readMemberState(team, name, env).catch(() => undefined)
    if (!state || state.status === 'exited' || state.status === 'dead' || state.pid === undefined || !isAlive(state.pid)) return true
    if (Date.now() >= deadline) return false
    await delay(100)
  }
}
