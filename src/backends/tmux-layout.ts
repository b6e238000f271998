/**
 * The team window's layout, from the window's size: the leader on the left, never narrower than
 * LEADER_MIN_COLUMNS (the whole window when no teammate pane of usable size fits beside it), as
 * many teammates stacked beside it as fit, the rest in the team's second window (`<team>+`).
 * Re-run on every spawn, kill, show and window resize (a window hook, never a global option).
 */
import { swarmArgv } from './launch.js'
import { type TmuxClient, formatEscape, shellQuote, tmuxCommand } from './tmux-client.js'
import { LEAD_NAME, agentId as makeAgentId } from '../home/paths.js'
import { type PaneRow, listPanes, teamPanes } from './tmux-panes.js'

/** Narrowest leader pane: a permission prompt's line (`? [id] name wants to use Bash: …`) wraps readably at 60 (issue 22). */
export const LEADER_MIN_COLUMNS = 60
/** The leader's share of a wide window (200 columns → 80). */
const LEADER_SHARE = 0.4
/** Narrowest teammate pane worth showing: an agent's status line and a short command fit. */
export const TEAMMATE_MIN_COLUMNS = 36
/** Lowest teammate pane worth showing (its border title line not counted). */
export const TEAMMATE_MIN_ROWS = 6
/** The window option that marks a team's second window: its value is the team. */
export const OVERFLOW_OPTION = '@swarm_overflow'

export interface LayoutPlan {
  /** The leader pane's width (the window's whole width when no teammate fits beside it). */
  leaderColumns: number
  /** How many teammates fit beside the leader; the others go to the second window. */
  beside: number
}

/** Where the leader and `teammates` go in a window of `columns` × `rows`. */
export function planLayout(columns: number, rows: number, teammates: number): LayoutPlan {
  const room = columns - LEADER_MIN_COLUMNS - 1 // 1: the border between the leader and the stack
  if (teammates === 0 || room < TEAMMATE_MIN_COLUMNS) return { leaderColumns: columns, beside: 0 }
  const leaderColumns = Math.min(Math.max(LEADER_MIN_COLUMNS, Math.round(columns * LEADER_SHARE)), columns - 1 - TEAMMATE_MIN_COLUMNS)
  // Each stacked pane has a border line above it (pane-border-status top).
  const fit = Math.max(1, Math.floor(rows / (TEAMMATE_MIN_ROWS + 1)))
  return { leaderColumns, beside: Math.min(teammates, fit) }
}

/** The second window's name. */
export function overflowWindowName(team: string): string {
  return `${team}+`
}

/**
 * The hook both team windows carry: a resize runs `swarm layout` on this server, in the
 * background. Its output goes nowhere: tmux would show it over the pane you are in, and a
 * layout that failed leaves the panes as they were.
 */
export function resizeHook(window: string, team: string): string {
  const argv = [...swarmArgv(), 'layout', team, '--socket']
  const command = `${argv.map((a) => formatEscape(shellQuote(a))).join(' ')} '#{socket_path}' >/dev/null 2>&1 || true`
  return tmuxCommand('set-hook', '-w', '-t', window, 'window-resized', `run-shell -b ${tmuxCommand(command)}`)
}

/** Pane number order: the order the panes were made in, so the first teammates stay beside the leader. */
const byAge = (a: PaneRow, b: PaneRow) => Number(a.paneId.slice(1)) - Number(b.paneId.slice(1))

/**
 * Lays the team out on `client`'s server: moves teammates between the leader's window and the
 * second one (made when first needed; tmux closes it with its last pane), sets the leader's width
 * and the layouts. `windowSetup` gives the second window the team window's options.
 */
export async function relayoutTeam(client: TmuxClient, team: string, windowSetup: (window: string) => string[]): Promise<void> {
  const rows = await listPanes(client)
  const leader = rows.find((r) => r.agent === makeAgentId(LEAD_NAME, team))
  if (!leader) return
  // Only swarm's own (tagged) panes move: a shell you split into the team's window stays where you put it.
  const panes = teamPanes(rows, team).filter((p) => p !== leader && p.agent.endsWith(`@${team}`))
  const overflowPanes = panes.filter((p) => p.overflow === team)
  const teammates = panes.filter((p) => p.windowId === leader.windowId || p.overflow === team).sort(byAge)
  const plan = planLayout(leader.windowWidth, leader.windowHeight, teammates.length)
  const toMain = teammates.slice(0, plan.beside).filter((p) => p.windowId !== leader.windowId)
  const toOverflow = teammates.slice(plan.beside).filter((p) => p.windowId === leader.windowId)
  let overflow = overflowPanes[0]?.windowId
  const lines: string[] = []
  if (toOverflow.length && !overflow) {
    const first = toOverflow.shift()!
    const out = await client.source(
      [tmuxCommand('break-pane', '-d', '-P', '-F', '#{window_id}', '-s', first.paneId, '-n', overflowWindowName(team))],
      { what: 'break-pane' },
    )
    overflow = out.trim()
    lines.push(...windowSetup(overflow), tmuxCommand('set', '-w', '-t', overflow, OVERFLOW_OPTION, team))
  }
  // Into the second window first: a pane of it that leaves next is still there to join. Each join
  // splits its target pane in two, so each is followed by its window's layout (else the 4th fails: pane too small).
  for (const p of toOverflow)
    lines.push(tmuxCommand('join-pane', '-d', '-s', p.paneId, '-t', overflow!), tmuxCommand('select-layout', '-t', overflow!, 'tiled'))
  const mainLayout = [
    tmuxCommand('set', '-w', '-t', leader.windowId, 'main-pane-width', String(plan.leaderColumns)),
    tmuxCommand('select-layout', '-t', leader.windowId, 'main-vertical'),
  ]
  for (const p of toMain) lines.push(tmuxCommand('join-pane', '-h', '-d', '-s', p.paneId, '-t', leader.paneId), ...mainLayout)
  lines.push(...mainLayout)
  if (overflow && plan.beside < teammates.length) lines.push(tmuxCommand('select-layout', '-t', overflow, 'tiled'))
  // One command per line: a pane closed meanwhile ("can't find pane") does not stop the others.
  await client.exec(['source-file', '-'], lines.join('\n') + '\n')
}
