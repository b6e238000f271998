/*
 * `swarm team resume`: what lives is kept, what died is started again where it ran — a pane, the
 * leader (its hosted teammates), a host — each from its transcript; what was stopped on purpose is
 * named, not started. One path for the members with a pane process of their own, on a pane team
 * and a hosted one alike.
 */
import { transcriptPath } from '../agent/transcript.js'
import { defaultLeaderArgv, defaultTeammateArgv, teammateEnv } from '../backends/teammate-launch.js'
import { selectBackend, systemDetectInputs } from '../backends/detect.js'
import { createExecutor, remoteExecutor } from '../backends/registry.js'
import { type TeamStatus, teamStatus } from '../supervisor/status.js'
import { spawnTeammates, type SpawnTeammateInput } from '../supervisor/teammates.js'
import type { BackendType, PaneExecutor } from '../backends/types.js'
import { teamLeadSigner } from '../trust/sign.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam, updateTeam } from '../teams/team-store.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import { pathExists } from '../util/fs.js'
import { definedOnly } from '../util/object.js'
import { type ReapedProcess, assertNoneSurvive, reapTeam } from '../supervisor/reap-team.js'
import { runningLeader } from '../supervisor/leader-lock.js'
import { hostedViews, teamBackend } from '../backends/team-backend.js'
import { STOPPED_FIELD } from '../backends/directory.js'
import { hostedInProcess } from '../teams/hosting.js'
import { recordLeaderServer } from './leader-server.js'
import { type TrustSettings, checkSettingsPins } from '../supervisor/settings-pins.js'
import type { Env } from '../home/env.js'
import { hostCwd } from './lifecycle.js'

export interface ResumeReport {
  backend: BackendType
  leader: 'alive' | 'started'
  alive: string[]
  respawned: string[]
  /** Members stopped on purpose (`swarm kill` without --remove): left stopped, named. */
  stopped: string[]
  /** Leftover processes of dead members (and of a dead leader) that were stopped first. */
  reaped: ReapedProcess[]
  /** `--include-stopped`: members stopped on purpose that were started again, in their own sessions. */
  restarted?: string[]
  /** Members on a host that did not answer within its limit: neither alive nor dead as far as is known, left as they are. */
  unreachable?: string[]
  /**
   * A hosted team's members that run inside its leader (not stopped with `swarm kill`): restarted
   * by it, each with its view, as it starts in its pane — kept as they are when it runs.
   */
  hosted?: string[]
}

/** Stopped on purpose: swarm's own mark (Claude Code sets isActive false whenever it is idle). */
function stoppedOnPurpose(m: TeamMember): boolean {
  if (m[STOPPED_FIELD] === true) return true
  // isActive false alone counts once the member had a pane (not a never-started --no-start member).
  return m.ownsInbox !== true && m.isActive === false && (m.tmuxPaneId ?? '') !== '' && m.tmuxPaneId !== 'in-process'
}

/**
 * The backend to resume on: the recorded one, else (a team written with `--no-start --backend
 * auto`, never started) what detection picks here, recorded now.
 */
async function resumeBackend(team: string, config: TeamFile, env: Env): Promise<BackendType> {
  const known = teamBackend(config)
  if (known) return known
  const { backend } = await selectBackend('auto', systemDetectInputs(env))
  await updateTeam(
    team,
    (t) => {
      t.swarmBackend = backend
    },
    env,
  )
  return backend
}

/**
 * `swarm team resume`: after a leader crash, a killed tmux server or a reboot — re-adopts what
 * lives and respawns what is dead (members still meant to run: not stopped with `swarm kill`,
 * which are named instead) and what never started (a `--no-start` roster), each teammate
 * continuing from its transcript; unread messages and tasks wait on disk. A dead leader gets a
 * new pane (teammates that live keep theirs); with the session gone, a new one with the same
 * layout. An in-process team is resumed by running its leader (the caller does that).
 */
export interface ResumeOptions {
  env: Env
  /**
   * Asked when members to be started have settings (hooks, the files they name, sandbox) that
   * changed since they started: true trusts them (and pins them anew). Absent or false: nothing
   * is started, SettingsChangedError (exit 4) names them.
   */
  trustSettings?: TrustSettings
  /**
   * Also members stopped with `swarm kill`: they are meant to run again, each in its own session
   * (swarm's agent from its transcript, an agent CLI with its resume argv — Claude Code's
   * `--resume <session id>`); reported in `restarted`.
   */
  includeStopped?: boolean
}

export async function resumeTeam(team: string, opts: ResumeOptions): Promise<ResumeReport> {
  const env = opts.env
  const restarted = opts.includeStopped ? await clearStopped(team, env) : []
  const config = await readTeam(team, env)
  const backend = await resumeBackend(team, config, env)
  const also = (placed: { unreachable: string[] }) => ({
    ...(restarted.length ? { restarted } : {}),
    ...(placed.unreachable.length ? { unreachable: placed.unreachable } : {}),
  })
  if (backend === 'in-process') {
    const paneBackend = hostedViews(config)
    const executor = paneBackend ? createExecutor(paneBackend, { env, sign: await teamLeadSigner(team, env) }) : undefined
    const status = await teamStatus(team, { env, config, ...(executor && paneBackend ? { executors: { [paneBackend]: executor } } : {}) })
    const stateOf = (name: string) => status.members.find((r) => r.name === name)?.state
    const local = config.members.filter((m) => m.name !== LEAD_NAME && m.host === undefined)
    // On a hosted team, members with a pane process of their own (`swarm spawn --backend tmux`, an
    // agent CLI) run beside the leader, never inside it (hostedInProcess): resumed as on a pane team.
    const inside = local.filter((m) => hostedInProcess(config, m))
    const ownPanes = paneBackend ? local.filter((m) => !hostedInProcess(config, m)) : []
    // The team lived inside its leader: unless that one still runs (the new leader is then
    // refused), whatever the old one's teammates left running goes before they restart.
    const leaderRuns = runningLeader(team, env) !== undefined
    const lives = (m: TeamMember) => (ownPanes.includes(m) ? stateOf(m.name) === 'alive' : leaderRuns)
    // Before anything is reaped: the leader checks its own again as it starts them (leader.ts), the same check.
    await checkSettingsPins(
      team,
      config.members.filter((m) => m.name !== LEAD_NAME && (ownPanes.includes(m) ? !lives(m) && !stoppedOnPurpose(m) : m[STOPPED_FIELD] !== true)),
      env,
      opts.trustSettings,
    )
    const reaped = await reapDead(
      team,
      config.members.filter((m) => !lives(m)),
      env,
    )
    // Members on hosts run there, not in the leader: the same as on a pane team (their link went with the reap).
    const placed = await resumeOnHosts(team, config, status.members, env)
    const stoppedInside = inside.filter((m) => m[STOPPED_FIELD] === true).map((m) => m.name)
    const hosted = inside.filter((m) => m[STOPPED_FIELD] !== true).map((m) => m.name)
    if (!executor || !paneBackend)
      return {
        backend,
        leader: 'started',
        alive: placed.alive,
        respawned: placed.respawned,
        stopped: [...stoppedInside, ...placed.stopped],
        reaped,
        ...also(placed),
      }
    // A hosted team: its leader goes back into a pane, where it restarts its hosted teammates and their views.
    const leader = await ensureLeaderPane(team, config, executor, env)
    const panes = await resumeInPanes(team, ownPanes, stateOf, executor, env)
    return {
      backend: paneBackend,
      leader: leader.created ? 'started' : 'alive',
      alive: [...panes.alive, ...placed.alive],
      respawned: [...panes.respawned, ...placed.respawned],
      stopped: [...stoppedInside, ...panes.stopped, ...placed.stopped],
      reaped,
      hosted,
      ...also(placed),
    }
  }
  const sign = await teamLeadSigner(team, env)
  const executor: PaneExecutor = createExecutor(backend, { env, sign })
  const status = await teamStatus(team, { env, executors: { [backend]: executor } })
  const stateOf = (name: string) => status.members.find((r) => r.name === name)?.state
  // Before anything is reaped or started.
  await checkSettingsPins(
    team,
    config.members.filter((m) => m.name !== LEAD_NAME && stateOf(m.name) !== 'alive' && !stoppedOnPurpose(m)),
    env,
    opts.trustSettings,
  )
  const reaped = await reapDead(
    team,
    config.members.filter((m) => stateOf(m.name) !== 'alive'),
    env,
  )
  const leader = await ensureLeaderPane(team, config, executor, env)
  const panes = await resumeInPanes(
    team,
    config.members.filter((m) => m.name !== LEAD_NAME && m.host === undefined),
    stateOf,
    executor,
    env,
  )
  const placed = await resumeOnHosts(team, config, status.members, env)
  return {
    backend,
    leader: leader.created ? 'started' : 'alive',
    alive: [...panes.alive, ...placed.alive],
    respawned: [...panes.respawned, ...placed.respawned],
    stopped: [...panes.stopped, ...placed.stopped],
    reaped,
    ...also(placed),
  }
}

/**
 * What dead members (and a dead leader) left running — a Bash command, a setsid'd child, a view —
 * goes before anything is started again; what lives is left alone. A survivor stops the resume (exit 8).
 */
async function reapDead(team: string, dead: readonly TeamMember[], env: Env): Promise<ReapedProcess[]> {
  if (!dead.length) return []
  const reaped = await reapTeam(
    team,
    env,
    dead.map((m) => m.name),
  )
  assertNoneSurvive(team, reaped.survivors, 'nothing was restarted')
  return reaped.killed
}

/** The leader's pane: kept when it runs, else respawned in place or put back on the left (PaneExecutor.ensureLeader). */
async function ensureLeaderPane(team: string, config: TeamFile, executor: PaneExecutor, env: Env): Promise<{ created: boolean }> {
  const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  const leader = await executor.ensureLeader(team, { argv: defaultLeaderArgv(team), cwd: leadCwd, env: teammateEnv(env, { team, name: LEAD_NAME }) })
  await recordLeaderServer(team, leader, env)
  return leader
}

/**
 * The members with a pane process of their own on this machine — every teammate of a pane team,
 * those spawned beside a hosted team's leader — resumed alike: alive ones are kept, those stopped
 * with `swarm kill` named, the others started again in a pane: swarm's agent from its transcript
 * (`--resume`), an agent CLI with its resume argv, a never-started one with its first prompt.
 */
async function resumeInPanes(
  team: string,
  members: readonly TeamMember[],
  stateOf: (name: string) => TeamStatus['members'][number]['state'] | undefined,
  executor: PaneExecutor,
  env: Env,
): Promise<{ alive: string[]; respawned: string[]; stopped: string[] }> {
  const alive: string[] = []
  const stopped: string[] = []
  const dead: SpawnTeammateInput[] = []
  for (const m of members) {
    const state = stateOf(m.name)
    if (state === 'alive') {
      alive.push(m.name)
      continue
    }
    if (stoppedOnPurpose(m)) {
      stopped.push(m.name)
      continue
    }
    const firstPrompt = neverStartedPrompt(m)
    if (state === 'exited' || state === 'dead') await executor.kill(m.agentId).catch(() => undefined) // clear a dead pane
    const resume = await pathExists(transcriptPath(team, m.name, env))
    if (m.agent !== undefined) {
      dead.push({
        name: m.name,
        agent: m.agent,
        resume: true,
        cwd: m.cwd,
        ...firstPrompt,
        ...definedOnly({ model: m.model, mode: m.mode, agentType: m.agentType }),
      })
      continue
    }
    dead.push({
      name: m.name,
      argv: [
        ...defaultTeammateArgv(team, m.name, {
          ...(m.model ? { model: m.model } : {}),
          ...(m.mode ? { mode: m.mode } : {}),
          ...(m.agentType ? { agentType: m.agentType } : {}),
        }),
        ...(resume ? ['--resume'] : []),
      ],
      cwd: m.cwd,
      // Never started: its worktree is made now.
      ...(!m.worktreePath && m.worktree !== undefined ? { worktree: m.worktree } : {}),
      ...(resume ? {} : firstPrompt),
    })
  }
  if (dead.length) await spawnTeammates(team, dead, { env, executor })
  return { alive, respawned: dead.map((d) => d.name), stopped }
}

/** Never started (a --no-start roster): its prompt goes to its inbox as on team create. */
function neverStartedPrompt(m: TeamMember): { prompt?: string } {
  return m.backendType === undefined && m.prompt !== undefined ? { prompt: m.prompt } : {}
}

/**
 * The members placed on hosts, on a pane team and an in-process one alike (they run there, not
 * in this machine's panes or leader): alive ones are kept, and get their link again (it stopped
 * with this machine, or went with the old leader's reap); gone ones (their host rebooted, their
 * pane closed) start again on that host from their transcript there (swarm's agent) or their
 * CLI's last session; a wedged or unreachable host's are left as they are — they may well run
 * on, and nothing is started twice.
 */
async function resumeOnHosts(
  team: string,
  config: TeamFile,
  seen: TeamStatus['members'],
  env: Env,
): Promise<{ alive: string[]; respawned: string[]; stopped: string[]; unreachable: string[] }> {
  const report = { alive: [] as string[], respawned: [] as string[], stopped: [] as string[], unreachable: [] as string[] }
  const placed = config.members.filter((m) => m.name !== LEAD_NAME && m.host !== undefined)
  if (!placed.length) return report
  const remote = remoteExecutor({ env })
  const dead: SpawnTeammateInput[] = []
  for (const m of placed) {
    const state = seen.find((r) => r.name === m.name)?.state
    if (state === 'alive') report.alive.push(m.name)
    else if (stoppedOnPurpose(m)) report.stopped.push(m.name)
    else if (state === 'unknown' && m.backendType !== undefined) report.unreachable.push(m.name)
    else {
      if (m.backendType !== undefined) await remote.kill(m.agentId).catch(() => undefined)
      dead.push({
        name: m.name,
        host: m.host!,
        ...(m.backendType !== undefined && { resume: true }),
        ...neverStartedPrompt(m),
        ...definedOnly({ agent: m.agent, cwd: hostCwd(m), model: m.model, mode: m.mode, agentType: m.agentType }),
      })
    }
  }
  if (dead.length) await spawnTeammates(team, dead, { env })
  report.respawned = dead.map((d) => d.name)
  // A respawn started the link; members alive there need it too.
  await remote.relink?.(team)
  return report
}

/** `--include-stopped`: members stopped with `swarm kill` are meant to run again; returns their names. */
async function clearStopped(team: string, env: Env): Promise<string[]> {
  const names: string[] = []
  await updateTeam(
    team,
    (t) => {
      for (const m of t.members) {
        if (m.name === LEAD_NAME || !stoppedOnPurpose(m)) continue
        delete m[STOPPED_FIELD]
        delete m.isActive // set again when it starts
        names.push(m.name)
      }
    },
    env,
  )
  return names
}
