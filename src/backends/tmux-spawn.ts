/**
 * Many teammates' panes from one tmux client: each in a window of its own first (`new-window -d`
 * never lacks room, where the ninth split of the leader pane does), its command behind a start
 * gate (tmux-launch.ts gatedExitStatus), so nothing runs yet; then one client for every pane's log,
 * options and tag, before the layout (tmux-layout.ts) puts the panes in place and the gates open.
 */
import { terminalSafe } from '../terminal/neutralize.js'
import { type TmuxClient, formatEscape, shellQuote, tmuxCommand } from './tmux-client.js'
import { argvArgs, envArgs } from './tmux-launch.js'
import { OVERFLOW_OPTION, PAGE_OPTION, overflowWindowName } from './tmux-layout.js'
import { TMUX_COLORS } from './tmux-panes.js'
import type { TeammateSpawnConfig } from './types.js'

/** One pane to make: its config (argv already wrapped and gated), id and log. */
export interface PaneLaunch {
  config: TeammateSpawnConfig
  agentId: string
  logFile: string
}

/** A pane made, as tmux printed it. */
export interface MadePane {
  paneId: string
  pid: number | undefined
  socketPath: string
  windowId: string
}

/**
 * Makes every pane in one `source-file` (one line each, so one that fails does not stop the
 * others), windows right after the leader's. Returns the panes made by agent id; `failed` is
 * tmux's error output when some were not made.
 */
export async function makePanes(
  client: TmuxClient,
  leaderWindow: string,
  team: string,
  launches: PaneLaunch[],
): Promise<{ made: Map<string, MadePane>; failed: string }> {
  const lines = launches.map(({ config, agentId }) =>
    tmuxCommand(
      'new-window',
      '-d',
      '-a',
      '-t',
      leaderWindow,
      '-n',
      `${overflowWindowName(team)}new`,
      '-P',
      '-F',
      `${formatEscape(agentId)}\t#{pane_id}\t#{pane_pid}\t#{socket_path}\t#{window_id}`,
      '-c',
      formatEscape(config.cwd),
      ...envArgs(config.env),
      ...argvArgs(config.argv),
    ),
  )
  const r = await client.exec(['source-file', '-'], lines.join('\n') + '\n', { commands: lines.length })
  const made = new Map<string, MadePane>()
  for (const line of r.stdout.split('\n')) {
    const [agentId, paneId, pid, socketPath, windowId] = line.split('\t')
    if (paneId?.startsWith('%')) made.set(agentId, { paneId, pid: Number(pid) || undefined, socketPath, windowId })
  }
  return { made, failed: made.size === launches.length ? '' : r.stderr || `no pane id printed (${JSON.stringify(r.stdout)})` }
}

/**
 * Each made pane's log (piped before its gate opens, so from the first byte), remain-on-exit,
 * passthrough off, title, colour and identity, and its window marked as a new pane's of `team`
 * for the layout to place. One command per line.
 */
export function paneSetup(team: string, launch: PaneLaunch, pane: MadePane): string[] {
  const { config, agentId, logFile } = launch
  const color = TMUX_COLORS[config.color ?? ''] ?? config.color ?? 'default'
  // The title may come from a model (the lead agent's Agent tool): shown, never acted on (select-pane -T expands formats).
  const title = terminalSafe(config.title ?? config.name, { singleLine: true })
  const p = pane.paneId
  return [
    tmuxCommand('pipe-pane', '-o', '-t', p, formatEscape(`exec cat >> ${shellQuote(logFile)}`)),
    tmuxCommand('set', '-p', '-t', p, 'remain-on-exit', 'on'),
    // On the pane, not only its window: it moves with the pane when hidden (break-pane makes a window of tmux.conf's defaults).
    tmuxCommand('set', '-p', '-t', p, 'allow-passthrough', 'off'),
    tmuxCommand('select-pane', '-t', p, '-T', formatEscape(title)),
    tmuxCommand('set', '-p', '-t', p, '@agent_color', color),
    tmuxCommand('set', '-p', '-t', p, '@agent_name', title),
    tmuxCommand('set', '-p', '-t', p, '@swarm_agent', agentId),
    tmuxCommand('set', '-w', '-t', pane.windowId, OVERFLOW_OPTION, team),
    tmuxCommand('set', '-w', '-t', pane.windowId, PAGE_OPTION, '0'),
  ]
}
