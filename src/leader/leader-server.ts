/**
 * The tmux server a team's leader runs on, recorded on the lead member (as each teammate's is):
 * `status`, `resume`, `spawn` and `attach` from any shell then ask the team's server, even when the
 * team lives in your own tmux and the shell is outside it. Its pane is found by its tag.
 */
import { TMUX_SOCKET_FIELD } from '../backends/directory.js'
import type { LeaderPane } from '../backends/types.js'
import { LEAD_NAME } from '../home/paths.js'
import { updateTeam } from '../teams/team-store.js'

export async function recordLeaderServer(team: string, leader: LeaderPane, env: NodeJS.ProcessEnv): Promise<void> {
  await updateTeam(
    team,
    (t) => {
      const lead = t.members.find((m) => m.name === LEAD_NAME)
      if (!lead) return
      if (leader.socketPath) lead[TMUX_SOCKET_FIELD] = leader.socketPath
      else delete lead[TMUX_SOCKET_FIELD]
    },
    env,
  )
}
