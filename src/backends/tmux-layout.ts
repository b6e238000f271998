/**
 * The team window's layout, from the window's size: the leader on the left, never narrower than
 * LEADER_MIN_COLUMNS (the whole window when no teammate pane of usable size fits beside it), as
 * many teammates stacked beside it as fit, the rest in further windows of at most PAGE_MAX tiled
 * panes each (`<team>+`, `<team>+2`, …), oldest first. Re-run on every spawn, kill, show and
 * window resize (a window hook, never a global option); running it again changes nothing.
 */
import { swarmArgv } from './teammate-launch.js'
import { type TmuxClient, TmuxCommandError, formatEscape, shellQuote, tmuxCommand } from './tmux-client.js'
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
/** Lowest pane of a further window (its border line not counted): a page shows a few lines of each teammate's work. */
export const PAGE_MIN_ROWS = 10
/** Most teammates in one further window: beyond it, tiled panes are too small to follow. */
export const PAGE_MAX = 8
/** The window option that marks a team's further windows (and a new pane's own window): its value is the team. */
export const OVERFLOW_OPTION = '@swarm_overflow'
/** Which of the further windows it is: 1, 2, …; 0 for a new pane's window before the layout places the pane. */
export const PAGE_OPTION = '@swarm_page'
/** Layout passes at most: a pass that finds a window gone (emptied by an earlier move) leaves the rest to the next. */
const PASSES = 3

export interface LayoutPlan {
  /** The leader pane's width (the window's whole width when no teammate fits beside it). */
  leaderColumns: number
  /** How many teammates fit beside the leader; the others go to the further windows. */
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

/** How many teammates one further window of `columns` × `rows` holds: a grid of panes of usable size, at most PAGE_MAX, at least 1. */
export function pageCapacity(columns: number, rows: number): number {
  const across = Math.floor((columns + 1) / (TEAMMATE_MIN_COLUMNS + 1))
  const down = Math.floor(rows / (PAGE_MIN_ROWS + 1))
  return Math.max(1, Math.min(PAGE_MAX, across * down))
}

/** Where each of `teammates` (oldest first) goes: 0 beside the leader, else its page. */
export function placeTeammates(columns: number, rows: number, teammates: number): number[] {
  const { beside } = planLayout(columns, rows, teammates)
  const perPage = pageCapacity(columns, rows)
  return Array.from({ length: teammates }, (_, i) => (i < beside ? 0 : 1 + Math.floor((i - beside) / perPage)))
}

/** A further window's name: `<team>+` for the first, `<team>+2`, `<team>+3`… after it. */
export function overflowWindowName(team: string, page = 1): string {
  return page <= 1 ? `${team}+` : `${team}+${page}`
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
 * further ones (made when first needed; tmux closes one with its last pane), sets the leader's
 * width and the layouts. `windowSetup` gives a further window the team window's options.
 */
export async function relayoutTeam(client: TmuxClient, team: string, windowSetup: (window: string) => string[]): Promise<void> {
  for (let pass = 0; pass < PASSES; pass++) {
    try {
      if (!(await layoutPass(client, team, windowSetup))) return
    } catch (err) {
      // A pane (or its window) that went away between the listing and the moves — a teammate that
      // exited meanwhile: the next pass lays out the panes there are then.
      if (!(err instanceof TmuxCommandError && /can't find (pane|window)/.test(err.message)) || pass === PASSES - 1) throw err
    }
  }
}

/** One pass: the moves the panes listed now need. False when nothing was left to move. */
async function layoutPass(client: TmuxClient, team: string, windowSetup: (window: string) => string[]): Promise<boolean> {
  const rows = await listPanes(client)
  const leader = rows.find((r) => r.agent === makeAgentId(LEAD_NAME, team))
  if (!leader) return false
  // Only swarm's own (tagged) panes move: a shell you split into the team's window stays where you put it.
  const teammates = teamPanes(rows, team)
    .filter((p) => p !== leader && p.agent.endsWith(`@${team}`) && (p.windowId === leader.windowId || p.overflow === team))
    .sort(byAge)
  const targets = placeTeammates(leader.windowWidth, leader.windowHeight, teammates.length)
  const pages = new Map<number, string>()
  for (const p of teammates) if (p.overflow === team && p.page > 0 && !pages.has(p.page)) pages.set(p.page, p.windowId)
  const inPlace = (p: PaneRow, page: number) => (page === 0 ? p.windowId === leader.windowId : p.windowId === pages.get(page))
  const panesIn = (window: string) => rows.filter((r) => r.windowId === window).length
  const lines: string[] = []
  const pageSetup = (window: string, page: number) => [
    ...windowSetup(window),
    tmuxCommand('set', '-w', '-t', window, OVERFLOW_OPTION, team),
    tmuxCommand('set', '-w', '-t', window, PAGE_OPTION, String(page)),
  ]
  // A page with no window yet: a pane alone in a window of the team's (a new pane's own) makes that window the page; else one pane is broken out into it.
  const breaks: Array<{ pane: PaneRow; page: number }> = []
  teammates.forEach((p, k) => {
    const page = targets[k]
    if (page === 0 || pages.has(page)) return
    if (p.overflow === team && panesIn(p.windowId) === 1) {
      if (pages.get(p.page) === p.windowId) pages.delete(p.page)
      pages.set(page, p.windowId)
      lines.push(tmuxCommand('rename-window', '-t', p.windowId, overflowWindowName(team, page)), ...pageSetup(p.windowId, page))
    } else if (panesIn(p.windowId) > 1) {
      pages.set(page, '') // made below
      breaks.push({ pane: p, page })
    }
  })
  if (breaks.length) {
    const out = await client.source(
      breaks.map(({ pane, page }) =>
        tmuxCommand('break-pane', '-d', '-P', '-F', `${page}\t#{window_id}`, '-s', pane.paneId, '-n', overflowWindowName(team, page)),
      ),
      { what: 'break-pane' },
    )
    for (const line of out.trim().split('\n')) {
      const [page, window] = line.split('\t')
      if (window?.startsWith('@')) {
        pages.set(Number(page), window)
        lines.push(...pageSetup(window, Number(page)))
      }
    }
  }
  const broken = new Set(breaks.map((b) => b.pane))
  const mainLayout = [
    tmuxCommand(
      'set',
      '-w',
      '-t',
      leader.windowId,
      'main-pane-width',
      String(planLayout(leader.windowWidth, leader.windowHeight, teammates.length).leaderColumns),
    ),
    tmuxCommand('select-layout', '-t', leader.windowId, 'main-vertical'),
  ]
  let moved = broken.size > 0
  // Into the further windows first (a pane of the leader's window that leaves is still there to
  // join), in page order. Each join splits its target pane in two, so each is followed by its
  // window's layout (else the 4th fails: pane too small).
  const order = teammates.map((p, k) => ({ p, page: targets[k] })).sort((a, b) => (a.page || Infinity) - (b.page || Infinity))
  // A teammate joining the stack goes below its last pane (the first started stay on top), the first one beside the leader.
  const lastIn = new Map<string, string>()
  for (const b of breaks) if (pages.get(b.page)) lastIn.set(pages.get(b.page)!, b.pane.paneId)
  let below = rows.filter((r) => r.windowId === leader.windowId && teammates.includes(r) && targets[teammates.indexOf(r)] === 0).at(-1)
  for (const { p, page } of order) {
    if (broken.has(p) || inPlace(p, page)) continue
    const window = page === 0 ? leader.windowId : pages.get(page)
    if (!window) continue // no window for it this pass (see PASSES)
    moved = true
    if (page !== 0) {
      // After the window's last pane, so a page reads in the order its teammates started.
      const last = lastIn.get(window) ?? rows.filter((r) => r.windowId === window).at(-1)?.paneId
      lines.push(tmuxCommand('join-pane', '-d', '-s', p.paneId, '-t', last ?? window), tmuxCommand('select-layout', '-t', window, 'tiled'))
      lastIn.set(window, p.paneId)
      continue
    }
    const join = below ? ['-v', '-t', below.paneId] : ['-h', '-t', leader.paneId]
    lines.push(tmuxCommand('join-pane', '-d', '-s', p.paneId, ...join), ...mainLayout)
    below = p
  }
  lines.push(...mainLayout)
  for (const window of new Set(pages.values())) if (window) lines.push(tmuxCommand('select-layout', '-t', window, 'tiled'))
  // One command per line: a pane closed meanwhile ("can't find pane") does not stop the others.
  await client.exec(['source-file', '-'], lines.join('\n') + '\n', { commands: lines.length })
  return moved
}
