import { BackendUnavailableError, ExitCode, NotFoundError, SwarmError, UsageError } from '../errors.js'
import { LEAD_NAME, agentId as makeAgentId } from '../home/paths.js'
import { teamLeadSigner } from '../trust/sign.js'
import { leadSealerOf } from '../teams/messaging.js'
import { findMember, readTeam, updateTeam } from '../teams/team-store.js'
import type { TeamFile } from '../teams/types.js'
import { delay } from '../process/delay.js'
import { STOPPED_FIELD, backendOf } from '../backends/directory.js'
import { createExecutor, paneBackends } from '../backends/registry.js'
import { assertNoneSurvive, reapTeam } from './reap-team.js'
import { endGoneLeadKeyHolders } from './lead-key-holders.js'
import { runningLeader } from './leader-lock.js'
import { GRACEFUL_STOP_MS, requestShutdown } from '../backends/shutdown.js'
import type { InProcessExecutor, LeadSigner, PaneExecutor, TeammateExecutor } from '../backends/types.js'
import type { Env } from '../home/env.js'

export interface StopOptions {
  /** Ask with shutdown_request first and wait up to timeoutMs (default true). */
  graceful?: boolean
  timeoutMs?: number
  env?: Env
  sign?: LeadSigner
  /** The leader's in-process executor, when called from inside the leader. */
  inProcess?: InProcessExecutor
  executors?: Partial<Record<string, PaneExecutor>>
  /** Members the caller has already ended (a gone Claude Code lead's teammates): neither asked nor counted, their panes still closed. */
  skip?: readonly string[]
}

/** How each member ended: by itself after the request, or killed. */
export interface StopReport {
  team: string
  exited: string[]
  killed: string[]
  /** In-process members this process cannot reach (no leader executor given). */
  unreachable: string[]
}

/**
 * Stops every member of a team and leaves no pane, session or process behind (`team delete`):
 * with `graceful`, a shutdown_request to each live teammate and a wait of up to `timeoutMs` for
 * them to exit; then every remaining pane and process tree is killed, the leader's pane and the
 * tmux session included, and every member is marked inactive. A missing config still closes the
 * team's tmux session.
 */
export async function stopTeamMembers(team: string, opts: StopOptions = {}): Promise<StopReport> {
  const env = opts.env ?? process.env
  const config = await readTeamIfAny(team, env)
  // A lost or unreadable key leaves no sealer: the stop is forced (nobody could trust an order).
  const sign = opts.sign ?? (config ? await leadSealerOf(config, env).catch(() => undefined) : undefined)
  const members = (config?.members ?? []).filter((m) => m.name !== LEAD_NAME)
  const report: StopReport = { team, exited: [], killed: [], unreachable: [] }
  const cache = new Map<string, TeammateExecutor<unknown>>()
  const executorFor = (backend: string): TeammateExecutor<unknown> | undefined => {
    if (backend === 'in-process') return opts.inProcess
    let e = cache.get(backend) ?? opts.executors?.[backend]
    if (!e) {
      e = createExecutor(backend, { env, sign })
      cache.set(backend, e)
    }
    return e
  }
  const byBackend = new Map<TeammateExecutor<unknown> | undefined, string[]>()
  for (const m of members) {
    const backend = backendOf(m)
    if (!backend) continue
    const executor = executorFor(backend)
    if (!executor) report.unreachable.push(m.name)
    byBackend.set(executor, [...(byBackend.get(executor) ?? []), m.agentId])
  }
  const skipped = new Set((opts.skip ?? []).map((name) => makeAgentId(name, team)))
  const alive = async (): Promise<Set<string>> => {
    const ids = new Set<string>()
    for (const [executor, group] of byBackend) {
      if (!executor) continue
      for (const [id, s] of await executor.status(group)) if (s.state === 'alive' && !skipped.has(id)) ids.add(id)
    }
    return ids
  }

  const running = await alive()
  // Without a sealer (the lead's key is lost) no request could be trusted: every member is killed.
  if (opts.graceful !== false && running.size && sign !== undefined) {
    const everyone = [...running, ...(byBackend.get(undefined) ?? []).filter((id) => !skipped.has(id))]
    await Promise.all(everyone.map((id) => requestShutdown(id, 'the team is being stopped', { env, sign })))
    const deadline = Date.now() + (opts.timeoutMs ?? GRACEFUL_STOP_MS)
    let left = running
    while (left.size && Date.now() < deadline) {
      await delay(100)
      left = await alive()
    }
    for (const id of running) (left.has(id) ? report.killed : report.exited).push(id.slice(0, id.lastIndexOf('@')))
  } else {
    for (const id of running) report.killed.push(id.slice(0, id.lastIndexOf('@')))
  }

  for (const [executor, group] of byBackend) if (executor) await executor.killMany(group)
  // The session (leader pane included) and any pane tagged for the team, even with no config left.
  // A standalone backend (tmux) may hold the team's session with no member recorded on it.
  for (const backend of paneBackends()) {
    const used = members.some((m) => backendOf(m) === backend.type)
    if (!used && !backend.standalone) continue
    try {
      await (executorFor(backend.type) as PaneExecutor).stopTeam(team)
    } catch (err) {
      // Not installed (tmux missing): there is no session to close.
      if (!(err instanceof SwarmError && err.exitCode === ExitCode.backendUnavailable) || used) throw err
    }
  }
  if (config) {
    await updateTeam(
      team,
      (t) => {
        for (const m of t.members) {
          if (m.name === LEAD_NAME || report.unreachable.includes(m.name)) continue
          m.isActive = false
          m[STOPPED_FIELD] = true
        }
      },
      env,
    )
  }
  return report
}

export interface KillOptions {
  /** Kill at once instead of asking first. */
  now?: boolean
  /** A teammate that refuses the shutdown_request is left running (outcome `refused`) instead of killed. */
  respectRefusal?: boolean
  timeoutMs?: number
  env?: Env
  sign?: LeadSigner
}

export type KillOutcome =
  | { outcome: 'exited' }
  /** A teammate of a gone Claude Code lead (it obeys only that lead's signature): ended with SIGTERM. */
  | { outcome: 'signalled' }
  | { outcome: 'approved' }
  | { outcome: 'killed'; after?: 'timeout' | 'rejected'; reason?: string }
  /** `respectRefusal`: it declined, and runs on untouched. */
  | { outcome: 'refused'; reason: string }
  | { outcome: 'requested' }

/**
 * `swarm kill`: graceful (shutdown_request, then forced after `timeoutMs` or a rejection — the
 * user asked for it to stop — unless `respectRefusal`, which leaves a refusing teammate running)
 * or, with `now`, killed at once. A teammate of a gone Claude Code
 * lead is never asked (it would call the request forged): SIGTERM, as on `team delete`. An
 * in-process teammate can only be asked from here: killing it needs its leader (exit 7); with no
 * leader running, it is only marked stopped.
 */
export async function killTeammate(team: string, name: string, opts: KillOptions = {}): Promise<KillOutcome> {
  const env = opts.env ?? process.env
  if (name === LEAD_NAME) throw new UsageError(`${LEAD_NAME} is the leader`, { hint: `stop the whole team with "swarm team delete ${team}"` })
  const config = await readTeam(team, env)
  const member = findMember(config, name)
  const id = makeAgentId(name, team)
  // shutdown_request is privileged: unsigned, a teammate would ignore it.
  const sign = opts.sign ?? (await leadSealerOf(config, env))
  const backend = backendOf(member)
  let outcome: KillOutcome
  if (!backend) {
    throw new NotFoundError(`${name} has never been started`, { hint: `start it with "swarm spawn ${team} ${name}"` })
  }
  const ended = await endGoneLeadKeyHolders(config, { only: [name], ...(opts.now && { graceMs: 0 }) })
  if (ended.signalled.length || ended.killed.length) {
    // Its pane goes too (Claude Code leaves it open, dead).
    if (backend !== 'in-process') await createExecutor(backend, { env, sign }).kill(id)
    outcome = ended.signalled.length ? { outcome: 'signalled' } : { outcome: 'killed' }
  } else if (backend === 'in-process') {
    if (opts.now) {
      throw new BackendUnavailableError(`${name} runs inside its leader's process; only the leader can kill it`, {
        hint: `ask it to stop with "swarm kill ${team} ${name}" (without --now)`,
      })
    }
    if (runningLeader(team, env) === undefined) {
      // Nothing runs it now: no request is left in its inbox to stop it again on its next start.
      await markStopped(team, name, env, { inactive: true })
      return { outcome: 'exited' }
    }
    // Only its leader can stop it, and only on a trusted order: a lost key is an error naming `swarm team rekey`.
    await requestShutdown(id, 'stopped with swarm kill', { env, sign: sign ?? (await teamLeadSigner(team, env)) })
    // Its leader stops it; the mark keeps it stopped when that leader (re)starts its roster, as on a pane team.
    await markStopped(team, name, env, { inactive: false })
    return { outcome: 'requested' }
  } else {
    const executor = createExecutor(backend, { env, sign })
    if (opts.now) {
      await executor.kill(id)
      outcome = { outcome: 'killed' }
    } else {
      const r = await executor.terminate(id, 'stopped with swarm kill', { timeoutMs: opts.timeoutMs })
      // Respected, a refusal changes nothing: not killed, not reaped, not marked stopped.
      if (r.outcome === 'rejected' && opts.respectRefusal) return { outcome: 'refused', reason: r.reason }
      if (r.outcome === 'timeout' || r.outcome === 'rejected') {
        await executor.kill(id)
        outcome = { outcome: 'killed', after: r.outcome, ...(r.outcome === 'rejected' && { reason: r.reason }) }
      } else outcome = r
    }
  }
  // What it left running (a Bash command it started with setsid, say) goes too.
  const reaped = await reapTeam(team, env, [name])
  await markStopped(team, name, env, { inactive: true })
  assertNoneSurvive(team, reaped.survivors, `${name} is not fully stopped`)
  return outcome
}

/** Stopped on purpose (`swarm kill`): `team resume` and an in-process leader leave it stopped and name it; `swarm spawn` clears the mark. */
async function markStopped(team: string, name: string, env: Env, o: { inactive: boolean }): Promise<void> {
  await updateTeam(
    team,
    (t) => {
      const m = t.members.find((x) => x.name === name)
      if (!m) return
      if (o.inactive) m.isActive = false
      m[STOPPED_FIELD] = true
    },
    env,
  )
}

async function readTeamIfAny(team: string, env: Env): Promise<TeamFile | undefined> {
  try {
    return await readTeam(team, env)
  } catch (err) {
    if (err instanceof NotFoundError) return undefined // a half-deleted team may still have a session
    throw err
  }
}
