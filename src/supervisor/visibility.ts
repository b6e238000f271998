import { BackendUnavailableError } from '../errors.js'
import { getMember, updateTeam } from '../teams/team-store.js'
import { backendOf } from '../backends/directory.js'
import { createExecutor } from '../backends/registry.js'
import type { PaneExecutor } from '../backends/types.js'

export interface VisibilityOptions {
  env?: NodeJS.ProcessEnv
  executor?: PaneExecutor
}

/** Moves a teammate's pane out of the team window (break-pane) and records it in hiddenPaneIds. */
export async function hideTeammate(team: string, name: string, opts: VisibilityOptions = {}): Promise<void> {
  const { executor, member } = await paneOf(team, name, opts)
  await executor.hide(member.agentId)
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
  const { executor, member } = await paneOf(team, name, opts)
  await executor.show(member.agentId)
  await updateTeam(
    team,
    (t) => {
      t.hiddenPaneIds = (t.hiddenPaneIds ?? []).filter((id) => id !== member.tmuxPaneId)
    },
    opts.env,
  )
}

async function paneOf(team: string, name: string, opts: VisibilityOptions) {
  const member = await getMember(team, name, opts.env)
  const backend = backendOf(member)
  if (backend !== 'tmux') {
    throw new BackendUnavailableError(`${name} is not in a tmux pane (${backend ?? 'not started'}); only tmux panes can be hidden`)
  }
  return { member, executor: opts.executor ?? createExecutor('tmux', { env: opts.env }) }
}
