import { CorruptFileError, NotFoundError } from '../errors.js'
import { claudeLeadOf, claudePaneSocket } from '../teams/claude-lead.js'
import { readTeam } from '../teams/team-store.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import { parseAgentId } from './shutdown.js'
import type { BackendType, PaneDirectory, PaneRef } from './types.js'
import type { Env } from '../home/env.js'

/**
 * The member field where swarm records a tmux pane's server socket (config.json keeps unknown
 * fields), so that `swarm status` run from any shell asks the right server.
 */
export const TMUX_SOCKET_FIELD = 'tmuxSocket'

/**
 * The member field where swarm records that it stopped a teammate on purpose (kill, team delete):
 * `isActive: false` cannot say so for Claude Code, which sets it whenever it goes idle.
 */
export const STOPPED_FIELD = 'swarmStopped'

/**
 * The pane recorded for a member, if it has one ('' and 'in-process' are not panes). In a team led
 * by Claude Code the pane lives on that lead's tmux server, whose socket swarm finds itself.
 */
export function paneRefOf(m: TeamMember, config?: TeamFile): PaneRef | undefined {
  // The leader's pane is found by its tag; its server is recorded (the team's, wherever swarm is asked from).
  const server = m[TMUX_SOCKET_FIELD]
  if (!m.tmuxPaneId && typeof server === 'string' && server) return { agentId: m.agentId, paneId: '', socketPath: server }
  if (!m.tmuxPaneId || m.tmuxPaneId === 'in-process' || m.tmuxPaneId === 'leader') return undefined
  const lead = config && m[TMUX_SOCKET_FIELD] === undefined ? claudeLeadOf(config) : undefined
  if (lead) {
    const socket = claudePaneSocket(lead)
    // Its server is gone: there is no pane to find, and never one of ours of the same id.
    return socket ? { agentId: m.agentId, paneId: m.tmuxPaneId, socketPath: socket } : undefined
  }
  const socket = m[TMUX_SOCKET_FIELD]
  return { agentId: m.agentId, paneId: m.tmuxPaneId, ...(typeof socket === 'string' && socket && { socketPath: socket }) }
}

/** The backend a member runs on; older records without backendType are told apart by their pane id. */
export function backendOf(m: TeamMember): BackendType | undefined {
  if (m.backendType) return m.backendType
  if (m.tmuxPaneId === 'in-process') return 'in-process'
  if (m.tmuxPaneId.startsWith('%')) return 'tmux'
  return undefined
}

/**
 * Panes as recorded in each team's config.json (one read per team and call). With `known`, the
 * team file the caller has just read answers for its own team instead of a second read
 * (`swarm status` reads config.json once: its tmux call then starts before any other file read).
 */
export function teamStoreDirectory(env?: Env, known?: TeamFile): PaneDirectory {
  const read = (team: string) => (known?.name === team ? Promise.resolve(known) : readTeamOrUndefined(team, env))
  return {
    async lookup(agentIds) {
      const byTeam = new Map<string, string[]>()
      for (const id of agentIds) {
        const { team } = parseAgentId(id)
        byTeam.set(team, [...(byTeam.get(team) ?? []), id])
      }
      const refs = new Map<string, PaneRef>()
      for (const [team, ids] of byTeam) {
        const config = await read(team)
        for (const m of config?.members ?? []) {
          const ref = ids.includes(m.agentId) ? paneRefOf(m, config) : undefined
          if (ref) refs.set(m.agentId, ref)
        }
      }
      return refs
    },
    async teamPanes(team, backend) {
      // A corrupt config records no panes; the team's session is still found by its tags.
      const config = await read(team).catch((err: unknown) => {
        if (err instanceof CorruptFileError) return undefined
        throw err
      })
      return (config?.members ?? [])
        .filter((m) => backendOf(m) === backend)
        .sort((a, b) => a.joinedAt - b.joinedAt)
        .map((m) => paneRefOf(m, config))
        .filter((r): r is PaneRef => r !== undefined)
    },
  }
}

async function readTeamOrUndefined(team: string, env?: Env): Promise<TeamFile | undefined> {
  try {
    return await readTeam(team, env)
  } catch (err) {
    if (err instanceof NotFoundError) return undefined // a deleted team has no panes to find
    throw err
  }
}
