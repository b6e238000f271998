import { SwarmError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam } from '../teams/team-store.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import { backendOf, teamStoreDirectory } from '../backends/directory.js'
import { createExecutor } from '../backends/registry.js'
import { hostedViews } from '../backends/team-backend.js'
import { hostedInProcess } from '../teams/hosting.js'
import type { BackendType, InProcessExecutor, PaneExecutor, ProcessState } from '../backends/types.js'
import type { Env } from '../home/env.js'

/** One row of `swarm status`. */
export interface MemberStatus {
  name: string
  agentId: string
  backend?: BackendType
  /** Pane or session id ('' when none is recorded). */
  pane: string
  /** The tmux window its pane is in now: the team's, a page `<team>+N`, `hidden:<name>`. */
  window?: string
  color?: string
  /** What config.json says. */
  isActive?: boolean
  /** What the backend says; `unknown` when this process cannot see it (an in-process teammate). */
  state: 'alive' | 'exited' | 'dead' | 'unknown'
  pid?: number
  exitCode?: number
  reason?: string
}

export interface TeamStatus {
  team: string
  members: MemberStatus[]
}

export interface StatusOptions {
  env?: Env
  /** The leader's in-process executor, when asked from inside the leader. */
  inProcess?: InProcessExecutor
  /** Reuse executors (tests, benchmarks count their tmux calls). */
  executors?: Partial<Record<string, PaneExecutor>>
  /** The team's config when the caller has just read it. */
  config?: TeamFile
}

/**
 * Every member's process state with one batched call per backend in use: one `tmux list-panes`,
 * one `it2 session list`. The leader is found in tmux by its pane tag. A hosted team's teammates
 * (`team create --hosted`) are judged as in-process ones; the same call finds the pane that shows
 * each (its view) and the leader's, for the pane and window columns.
 */
export async function teamStatus(team: string, opts: StatusOptions = {}): Promise<TeamStatus> {
  const env = opts.env ?? process.env
  const config = opts.config ?? (await readTeam(team, env))
  const views = hostedViews(config)
  const groups = new Map<BackendType, TeamMember[]>()
  const add = (backend: BackendType, m: TeamMember) => groups.set(backend, [...(groups.get(backend) ?? []), m])
  for (const m of config.members) {
    // The leader of a pane team (or of a hosted one) has no backendType recorded: look for its tagged pane.
    const paneLead = views ?? (config.members.some((x) => backendOf(x) === 'tmux') ? 'tmux' : undefined)
    const backend = backendOf(m) ?? (m.name === LEAD_NAME ? paneLead : undefined)
    if (backend) add(backend, m)
    if (views && m.name !== LEAD_NAME && hostedInProcess(config, m)) add(views, m)
  }
  const states = new Map<string, Seen>()
  const seenBy = new Map<string, BackendType>()
  const shownIn = new Map<string, Seen>()
  await Promise.all(
    [...groups].map(async ([backend, members]) => {
      const viewOnly = (m: TeamMember) => backend === views && backendOf(m) === 'in-process'
      for (const m of members) if (!viewOnly(m)) seenBy.set(m.agentId, backend)
      const into = new Map(members.map((m) => [m.agentId, viewOnly(m) ? shownIn : states]))
      const ids = members.map((m) => m.agentId)
      const executor =
        backend === 'in-process'
          ? opts.inProcess
          : (opts.executors?.[backend] ?? createExecutor(backend, { env, directory: teamStoreDirectory(env, config) }))
      if (!executor) return
      try {
        for (const [id, s] of await executor.status(ids)) into.get(id)?.set(id, s)
      } catch (err) {
        // A backend that cannot answer (tmux uninstalled, it2 broken) leaves its members unknown.
        if (!(err instanceof SwarmError)) throw err
        for (const id of ids) into.get(id)?.set(id, { state: 'unknown', reason: err.message })
      }
    }),
  )
  return {
    team: config.name,
    members: config.members.map((m) => shownAt(describe(m, states.get(m.agentId), seenBy.get(m.agentId)), shownIn.get(m.agentId))),
  }
}

/** A hosted teammate's row with the pane and window of its view, when one is open: its state stays its own. */
function shownAt(row: MemberStatus, view: Seen | undefined): MemberStatus {
  if (view?.state !== 'alive' || !view.paneId) return row
  return { ...row, pane: view.paneId, ...(view.window && { window: view.window }) }
}

type Seen = ProcessState | { state: 'unknown'; reason: string }

function describe(m: TeamMember, s: Seen | undefined, seenBy: BackendType | undefined): MemberStatus {
  const base = { name: m.name, agentId: m.agentId, backend: backendOf(m), pane: m.tmuxPaneId, color: m.color, isActive: m.isActive }
  const lead = m.name === LEAD_NAME
  if (!s || (lead && s.state === 'dead' && s.reason === 'no pane recorded')) {
    const reason = backendOf(m) === 'in-process' ? 'in-process: only its leader can tell' : lead ? 'no leader pane found' : 'never started'
    return { ...base, state: 'unknown', reason }
  }
  // The leader's pane was found by its tag: show where.
  if (!base.backend) base.backend = seenBy
  if (s.state === 'alive' && !base.pane && s.paneId) base.pane = s.paneId
  if (s.state === 'alive') return { ...base, state: 'alive', ...(s.pid !== undefined && { pid: s.pid }), ...(s.window && { window: s.window }) }
  if (s.state === 'exited') return { ...base, state: 'exited', exitCode: s.code }
  // A wedged or unreachable host: what its member does is not known from here (never reported dead).
  if (s.state === 'unreachable') return { ...base, state: 'unknown', reason: s.reason }
  return { ...base, state: s.state, reason: s.reason }
}
