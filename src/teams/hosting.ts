import { LEAD_NAME } from '../home/paths.js'
import { claudeLeadOf } from './claude-lead.js'
import type { TeamFile, TeamMember } from './types.js'

/*
 * Which members live inside the team's leader process: in-process teammates, and on a team that
 * has them the lead itself. Read from config.json alone (no backend registry), so that `swarm send`
 * can say that a message waits for a leader without loading the backends.
 */

/**
 * The team field naming the pane backend (tmux) that shows a hosted team's teammates
 * (`team create --hosted`): they run inside the leader's process, each shown in a pane of its own.
 */
export const HOSTED_VIEWS_FIELD = 'swarmViews'

/**
 * How a pane team's teammates run: `hosted` inside the leader's process, each pane showing one
 * (`--hosted`); `isolated` a process of its own per pane (`--isolated`); `auto` hosted above
 * HOSTED_ABOVE teammates, isolated up to it.
 */
export type PaneMode = 'hosted' | 'isolated' | 'auto'

/**
 * Above this many teammates — what one window shows (tmux-layout.ts pages of 8) — `team create`
 * hosts them (auto): on a 2-core machine 16 Node processes' first broadcast takes 1.4 s and 64
 * take 4–5 s only to start, ~70 MB each, hosted ~3 MB each (issue 25's figures); up to it, each
 * keeps a process of its own, so a crash takes only itself.
 */
export const HOSTED_ABOVE = 8

/**
 * Whether `mode` hosts these teammates, and why (the line `team create` prints). Auto hosts only
 * teammates the leader can run: swarm's own agent (no `--agent` CLI), on this machine (no host:),
 * on a backend whose panes can show them (`paneViews`).
 */
export function hostsTeammates(
  mode: PaneMode,
  teammates: ReadonlyArray<Pick<TeamMember, 'agent' | 'host'>>,
  paneViews: boolean,
): { hosted: boolean; why?: string } {
  if (mode !== 'auto') return { hosted: mode === 'hosted', ...(mode === 'hosted' && { why: "teammates hosted in the leader's process" }) }
  const hostable = paneViews && teammates.every((m) => m.agent === undefined && m.host === undefined)
  if (!hostable || teammates.length <= HOSTED_ABOVE) return { hosted: false }
  return {
    hosted: true,
    why: `${teammates.length} teammates (more than ${HOSTED_ABOVE}) hosted in the leader's process; --isolated gives each a process of its own`,
  }
}

/**
 * Whether the team's leader hosts the member, inside its own process: it is recorded in-process,
 * or it has no backend of its own in a team created in-process. A member written with `--no-start`
 * and then spawned in a pane (or running another agent CLI) is never also started by the leader:
 * no twin answers its messages.
 */
export function hostedInProcess(config: TeamFile, m: TeamMember): boolean {
  if (m.agent !== undefined) return false
  if (m.backendType !== undefined) return m.backendType === 'in-process'
  return config.swarmBackend === 'in-process' && (m.tmuxPaneId === '' || m.tmuxPaneId === 'in-process')
}

/** Of `names`, those that read their inbox only while a swarm leader runs (none on a team led by Claude Code). */
export function livingInLeader(config: TeamFile, names: readonly string[]): string[] {
  if (claudeLeadOf(config)) return []
  const hosted = config.members.filter((m) => m.name !== LEAD_NAME && hostedInProcess(config, m)).map((m) => m.name)
  const inProcessTeam = config.swarmBackend === 'in-process' || hosted.length > 0
  return names.filter((n) => (n === LEAD_NAME ? inProcessTeam : hosted.includes(n)))
}
