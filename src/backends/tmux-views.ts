import { agentId as makeAgentId } from '../home/paths.js'
import { memberMarker } from '../home/member-marker.js'
import { markerEnv } from '../process/marker.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { TmuxClient, formatEscape, resolveSocket, tmuxCommand } from './tmux-client.js'
import { envArgs } from './tmux-launch.js'
import { OVERFLOW_OPTION, PAGE_OPTION } from './tmux-layout.js'
import { TMUX_COLORS, listPanes } from './tmux-panes.js'
import type { ViewSpec } from './types.js'
import type { Env } from '../home/env.js'

/*
 * A hosted teammate's pane (`team create --hosted`): the teammate runs inside its leader's process,
 * and its pane only shows what it prints — `tail -F` of the file the leader writes it to, one small
 * process instead of a Node agent, its wrapper and a pipe-pane logger (bench/pane-weight.mjs).
 */

/** Lines of earlier output a view shows when it opens (a leader started again: the story so far). */
const VIEW_HISTORY_LINES = 200

/**
 * Opens the view of `spec.name` in the session of the leader's pane ($TMUX_PANE of this process), tagged as the
 * teammate's pane (@swarm_agent: the layout, `attach` and `team delete` find it as any teammate's),
 * carrying the teammate's marker. A live view of it already there (its leader started again) is kept.
 * Returns its pane id.
 */
export async function openTmuxView(spec: ViewSpec, env: Env): Promise<string> {
  const leaderPane = env.TMUX_PANE
  if (!env.TMUX || !leaderPane) throw new Error('a teammate view opens only from a leader running in tmux')
  const client = new TmuxClient({ socket: resolveSocket(env), env })
  const agentId = makeAgentId(spec.name, spec.team)
  const existing = (await listPanes(client)).find((p) => p.agent === agentId && !p.dead)
  if (existing) return existing.paneId
  const marker = markerEnv(memberMarker(spec.team, spec.name, env))
  // In a window of its own, marked as a new pane's of the team: the layout then places it beside
  // the leader or on a page, as it places a process teammate's pane (a split could find no room).
  const session = (await client.run(['display-message', '-p', '-t', leaderPane, '#{session_name}'], 'display-message')).trim()
  const [paneId = '', windowId = ''] = (
    await client.run(
      [
        'new-window',
        '-d',
        '-t',
        `${session}:`,
        '-P',
        '-F',
        '#{pane_id}\t#{window_id}',
        ...envArgs(marker),
        'tail',
        '-n',
        String(VIEW_HISTORY_LINES),
        '-F',
        spec.file,
      ],
      'new-window',
    )
  )
    .trim()
    .split('\t')
  const title = terminalSafe(spec.name, { singleLine: true })
  await client.source(
    [
      tmuxCommand('select-pane', '-t', paneId, '-T', formatEscape(title)),
      tmuxCommand('set', '-p', '-t', paneId, 'allow-passthrough', 'off'),
      // A view that ends (its teammate's leader gone, the team reaped) leaves no dead pane behind.
      tmuxCommand('set', '-p', '-t', paneId, 'remain-on-exit', 'off'),
      tmuxCommand('set', '-p', '-t', paneId, '@agent_color', TMUX_COLORS[spec.color ?? ''] ?? spec.color ?? 'default'),
      tmuxCommand('set', '-p', '-t', paneId, '@agent_name', title),
      tmuxCommand('set', '-p', '-t', paneId, '@swarm_agent', agentId),
      tmuxCommand('set', '-w', '-t', windowId, OVERFLOW_OPTION, spec.team),
      tmuxCommand('set', '-w', '-t', windowId, PAGE_OPTION, '0'),
    ],
    { what: 'view setup' },
  )
  return paneId
}
