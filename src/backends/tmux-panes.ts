import { LEAD_NAME } from '../home/paths.js'
import { TmuxNoServerError, type TmuxClient } from './tmux-client.js'
import type { PaneRef, ProcessState } from './types.js'

/** Claude Code's agent colours that tmux has no name for. */
export const TMUX_COLORS: Record<string, string> = { purple: 'magenta', orange: 'colour208', pink: 'colour205' }

/** One pane of `list-panes -a`. */
export interface PaneRow {
  paneId: string
  dead: boolean
  deadStatus?: number
  deadSignal?: number
  pid: number
  /** `<name>@<team>` for panes swarm started (the pane option @swarm_agent). */
  agent: string
  windowId: string
  session: string
  socketPath: string
  /** The pane's window's size. */
  windowWidth: number
  windowHeight: number
  /** The team whose further window this pane is in (the window option @swarm_overflow), else ''. */
  overflow: string
  /**
   * In such a window: its page (@swarm_page: 1 for `<team>+`, 2 for `<team>+2`…; 0 for a new pane's
   * window before the layout places it; a window of an older swarm without the option is page 1).
   */
  page: number
  windowName: string
}

const FIELDS = [
  '#{pane_id}',
  '#{pane_dead}',
  '#{pane_dead_status}',
  '#{pane_dead_signal}',
  '#{pane_pid}',
  '#{@swarm_agent}',
  '#{window_id}',
  '#{session_name}',
  '#{socket_path}',
  '#{window_width}',
  '#{window_height}',
  '#{@swarm_overflow}',
  '#{@swarm_page}',
  '#{window_name}',
]

/** Every pane of the server, in one call. */
export async function listPanes(client: TmuxClient): Promise<PaneRow[]>
export async function listPanes(client: TmuxClient, opts: { allowNoServer: true }): Promise<PaneRow[] | 'no-server'>
export async function listPanes(client: TmuxClient, opts: { allowNoServer?: boolean } = {}): Promise<PaneRow[] | 'no-server'> {
  const r = await client.exec(['list-panes', '-a', '-F', FIELDS.join('\t')])
  // A server with no session left (its last one just closed, the server not yet gone) has no panes.
  if (r.code !== 0 && /no current target/.test(r.stderr)) return []
  if (r.code !== 0) {
    const err = client.failure('list-panes', r.stderr)
    if (err instanceof TmuxNoServerError) return opts.allowNoServer ? 'no-server' : []
    throw err
  }
  return parsePaneRows(r.stdout)
}

export function parsePaneRows(stdout: string): PaneRow[] {
  const rows: PaneRow[] = []
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('%')) continue
    const [paneId, dead, status, signal, pid, agent, windowId, session, socketPath, width, height, overflow, page, windowName] = line.split('\t')
    rows.push({
      paneId,
      dead: dead === '1',
      ...(status !== '' && status !== undefined && { deadStatus: Number(status) }),
      ...(signal !== '' && signal !== undefined && { deadSignal: Number(signal) }),
      pid: Number(pid) || 0,
      agent: agent ?? '',
      windowId: windowId ?? '',
      session: session ?? '',
      socketPath: socketPath ?? '',
      windowWidth: Number(width) || 0,
      windowHeight: Number(height) || 0,
      overflow: overflow ?? '',
      page: overflow ? (page === undefined || page === '' ? 1 : Number(page) || 0) : 0,
      windowName: windowName ?? '',
    })
  }
  return rows
}

export function paneById(rows: PaneRow[], paneId: string): PaneRow | undefined {
  return rows.find((r) => r.paneId === paneId)
}

/** Every pane swarm started for `team` (the leader's included), hidden ones too. */
export function teamPanes(rows: PaneRow[], team: string): PaneRow[] {
  return rows.filter((r) => r.agent.endsWith(`@${team}`) || r.session === `swarm-${team}`)
}

/** The team's leader pane, else any pane of the team's window. */
export function teamLeader(rows: PaneRow[], team: string): { paneId: string; windowId: string; socketPath: string } | undefined {
  const pane = rows.find((r) => r.agent === `${LEAD_NAME}@${team}`) ?? rows.find((r) => r.session === `swarm-${team}`)
  return pane && { paneId: pane.paneId, windowId: pane.windowId, socketPath: pane.socketPath }
}

/**
 * The first pane of the window that holds most of `panes` (the team's window; a hidden pane is
 * alone in its own; the second window, of teammates with no room beside the leader, does not count).
 */
export function teamWindowPane(panes: PaneRow[]): PaneRow | undefined {
  const count = new Map<string, number>()
  const main = panes.filter((p) => !p.overflow)
  for (const p of main.length ? main : panes) count.set(p.windowId, (count.get(p.windowId) ?? 0) + 1)
  const window = [...count].sort((a, b) => b[1] - a[1])[0]?.[0]
  return panes.find((p) => p.windowId === window)
}

/**
 * The agent's pane: the recorded one if it still carries this agent's tag (pane ids restart at %0
 * with a new server, so a stale id may now be someone else's), else the pane tagged with it.
 */
export function findPane(rows: PaneRow[], agentId: string, ref: PaneRef | undefined): PaneRow | undefined {
  const byId = ref && paneById(rows, ref.paneId)
  if (byId && (!byId.agent || byId.agent === agentId)) return byId
  return rows.find((r) => r.agent === agentId)
}

export function paneState(row: PaneRow | undefined, recorded: boolean, exitStatus: () => number | undefined): ProcessState {
  if (!row) return { state: 'dead', reason: recorded ? 'pane closed' : 'no pane recorded' }
  if (!row.dead) return { state: 'alive', pid: row.pid, paneId: row.paneId, ...(row.windowName && { window: row.windowName }) }
  if (row.deadStatus !== undefined) return { state: 'exited', code: row.deadStatus }
  if (row.deadSignal !== undefined) return { state: 'dead', reason: `killed by signal ${row.deadSignal}` }
  // tmux 3.3a sometimes never learns the status of a pane that has pipe-pane set (measured: about
  // 1 pane in 60 on a loaded machine); the pane's own wrapper wrote it down.
  const code = exitStatus()
  return code === undefined ? { state: 'dead', reason: 'process ended' } : { state: 'exited', code }
}
