/**
 * A person's ways to the tmux server a team runs on: attaching to the team's session (or switching
 * to it from inside the same server), the command that does it, what `swarm doctor` shows of the
 * server, and stopping a server of swarm's own (the demos run on one of theirs).
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { NotFoundError, UsageError } from '../errors.js'
import { agentId } from '../home/paths.js'
import { runInTerminal } from '../process/launch.js'
import { readTeam, teamExists } from '../teams/team-store.js'
import { TMUX_SOCKET_FIELD } from './directory.js'
import type { ServerReport } from './backend.js'
import { TmuxClient, describeSocket, killServer, resolveSocket, socketArgs, swarmSocket } from './tmux-client.js'
import { listPanes, teamLeader } from './tmux-panes.js'
import type { AttachIo } from './types.js'
import type { Env } from '../home/env.js'

/** `swarm-<team>`: the session of a team on the swarm server. */
export function sessionName(team: string): string {
  return `swarm-${team}`
}

/** Outside tmux, the command that shows a team's session; inside, none is needed (its window is in your session). */
export function tmuxAttachHint(team: string, env: Env): string | undefined {
  return env.TMUX ? undefined : `${describeSocket(resolveSocket(env))} attach -t ${sessionName(team)}`
}

/**
 * Finds the team's panes (on the server its members recorded, else `tmux -L swarm`) and attaches;
 * inside tmux on that same server it switches to the team's window instead of nesting. With
 * `member`, to that teammate's pane instead of the leader's: tmux makes its window (a page
 * `<team>+N`, a hidden pane's own) current and selects it.
 */
export async function attachTmuxTeam(team: string, io: AttachIo, env: Env, member?: string): Promise<number> {
  const config = (await teamExists(team, env)) ? await readTeam(team, env) : undefined
  const recorded = config?.members.map((m) => m[TMUX_SOCKET_FIELD]).find((s): s is string => typeof s === 'string' && s !== '')
  const socket = recorded ? { path: recorded } : swarmSocket(env)
  const tmux = new TmuxClient({ socket, env })
  const rows = await listPanes(tmux)
  const lead = teamLeader(rows, team)
  const plain = `${describeSocket(socket)} attach -t ${sessionName(team)}`
  if (!lead) {
    throw new NotFoundError(`team ${team} has no tmux session on ${describeSocket(socket)}`, {
      hint: `start it with "swarm team create ${team}" or "swarm spawn ${team} <name>"`,
    })
  }
  const pane = member === undefined ? lead : rows.find((r) => r.agent === agentId(member, team))
  if (!pane) {
    throw new NotFoundError(`${member} of team ${team} has no tmux pane on ${describeSocket(socket)}`, {
      hint: `see who runs with "swarm status ${team}"`,
    })
  }
  const leader = { ...lead, paneId: pane.paneId }
  if (env.TMUX && env.TMUX.split(',')[0] === leader.socketPath) {
    const r = await tmux.exec(['switch-client', '-t', leader.paneId])
    // No client attached to that server (a detached session, a script run inside tmux): the team runs; say how to reach it.
    if (r.code !== 0 && /no current client/.test(r.stderr)) {
      io.notice(`no tmux client is attached to switch to team ${team}; attach with: ${describeSocket(socket)} attach -t ${leader.paneId}`)
      return 0
    }
    if (r.code !== 0) throw tmux.failure('switch-client', r.stderr)
    return 0
  }
  if (!io.terminal) throw new UsageError('attach needs a terminal', { hint: `run it from a terminal: ${plain}` })
  // Attaching from inside another tmux nests them; tmux refuses that while $TMUX is set.
  const childEnv = { ...env }
  delete childEnv.TMUX
  if (env.TMUX) io.notice(`attaching inside your tmux (nested); detach with the prefix key twice then d`)
  return runInTerminal('tmux', [...socketArgs(socket), 'attach-session', '-t', leader.paneId], { env: childEnv })
}

/** swarm's own server (`tmux -L swarm`, or SWARM_TMUX_SOCKET): where it is and, when tmux works here, what runs on it. */
export async function inspectTmuxServer(env: Env, probed: boolean): Promise<ServerReport> {
  const socket = swarmSocket(env)
  const report: ServerReport = { socket: describeSocket(socket), serverRunning: false, sessions: [] }
  if (!probed) return report
  const r = await new TmuxClient({ socket, env, timeoutMs: 2_000 }).exec(['list-sessions', '-F', '#{session_name}'])
  report.serverRunning = r.code === 0
  report.sessions = r.code === 0 ? r.stdout.split('\n').filter(Boolean) : []
  const clip = await new TmuxClient({ socket: resolveSocket(env), env, timeoutMs: 2_000 }).exec(['show', '-sv', 'set-clipboard'])
  if (clip.code === 0) report.clipboard = clip.stdout.trim()
  return report
}

/** Stops swarm's own server for `env`; tmux leaves a named socket's file behind when its server exits, so that goes too. */
export async function closeTmuxServer(env: Env): Promise<void> {
  const socket = swarmSocket(env)
  await killServer(socket, env)
  const file = 'path' in socket ? socket.path : path.join(env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, socket.name)
  await fs.rm(file, { force: true })
}
