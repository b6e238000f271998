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
