import { BackendUnavailableError } from '../errors.js'
import { findMember, readTeam, updateTeam } from '../teams/team-store.js'
import { LEAD_NAME, validateAgentName } from '../home/paths.js'
import { hostedInProcess } from '../teams/hosting.js'
import { hostedViews } from '../backends/team-backend.js'
import { backendOf } from '../backends/directory.js'
import { createExecutor } from '../backends/registry.js'
import type { PaneExecutor } from '../backends/types.js'

export interface VisibilityOptions {
  env?: NodeJS.ProcessEnv
  executor?: PaneExecutor
}

/** Moves a teammate's pane (a hosted one's view) out of the team window (break-pane) and records it in hiddenPaneIds. */
export async function hideTeammate(team: string, name: string, opts: VisibilityOptions = {}): Promise<void> {
  const { executor, member, view } = await paneOf(team, name, opts)
  await executor.hide(member.agentId)
  if (view) return // a view has no pane id of record
  await updateTeam(
    team,
    (t) => {
      t.hiddenPaneIds = [...new Set([...(t.hiddenPaneIds ?? []), member.tmuxPaneId])]
    },
    opts.env,
  )
}

/** Brings a hidden pane back next to the leader (join-pane) and drops it from hiddenPaneIds. */
export async function showTeammate(team: string, name: string, opts: VisibilityOptions = {}): Promise<void> {
  const { executor, member, view } = await paneOf(team, name, opts)
  await executor.show(member.agentId)
  if (view) return
  await updateTeam(
    team,
    (t) => {
      t.hiddenPaneIds = (t.hiddenPaneIds ?? []).filter((id) => id !== member.tmuxPaneId)
    },
    opts.env,
  )
}

/** The member's tmux pane: its own, or the view of a hosted team's teammate (`team create --hosted`). */
async function paneOf(team: string, name: string, opts: VisibilityOptions) {
  validateAgentName(name)
  const config = await readTeam(team, opts.env)
  const member = findMember(config, name)
  const view = hostedViews(config) !== undefined && member.name !== LEAD_NAME && hostedInProcess(config, member)
  const backend = backendOf(member)
  if (backend !== 'tmux' && !view) {
    throw new BackendUnavailableError(`${name} is not in a tmux pane (${backend ?? 'not started'}); only tmux panes can be hidden`)
  }
  return { member, view, executor: opts.executor ?? createExecutor('tmux', { env: opts.env }) }
}
