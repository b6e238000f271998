/**
 * What swarm tells tmux about a team's window and panes, one command per line for `source-file`:
 * the leader pane's launch and identity, the window's options, and swarm's own server's. A
 * teammate's output is data: passthrough is off on every pane and window swarm makes.
 */
import { LEAD_NAME, agentId as makeAgentId } from '../home/paths.js'
import { formatEscape, tmuxCommand } from './tmux-client.js'
import { resizeHook } from './tmux-layout.js'
import { argvArgs, envArgs } from './tmux-launch.js'
import type { LeaderOptions } from './types.js'

/** A detached session's size until a client attaches (80×24 leaves no room for 16 panes). */
export const DETACHED_SIZE = ['-x', '220', '-y', '60']
/**
 * tmux 3.3 has no per-pane border style (`set -p pane-border-style` sets the window's), so the
 * title is coloured from a per-pane option. The name comes from @agent_name because programs
 * rewrite pane_title with escape sequences (Claude Code does).
 */
const BORDER_FORMAT = '#[fg=#{@agent_color}]#{?@agent_name,#{@agent_name},#{pane_title}}#[default]'
export const SPAWN_FORMAT = '#{pane_id}\t#{pane_pid}\t#{socket_path}'

/** What new-session and new-window print and run for the leader pane: its ids, cwd, env and argv. */
export function leaderPaneArgs(leader: LeaderOptions): string[] {
  return ['-P', '-F', `${SPAWN_FORMAT}\t#{window_id}`, '-c', formatEscape(leader.cwd), ...envArgs(leader.env), ...argvArgs(leader.argv)]
}

/** The leader pane's identity: its tag, name and title. */
export function leaderPaneSetup(pane: string, team: string): string[] {
  return [
    tmuxCommand('set', '-p', '-t', pane, '@swarm_agent', makeAgentId(LEAD_NAME, team)),
    tmuxCommand('set', '-p', '-t', pane, '@agent_name', LEAD_NAME),
    tmuxCommand('set', '-p', '-t', pane, 'allow-passthrough', 'off'),
    tmuxCommand('select-pane', '-t', pane, '-T', LEAD_NAME),
  ]
}

/**
 * swarm's own server (never yours, inside tmux): with a tmux.conf's `set-clipboard on`, any
 * teammate's output could set a tmux buffer and your terminal's clipboard (OSC 52) for you to paste;
 * `external` keeps tmux's own copy mode setting the clipboard and ignores the applications.
 */
export const OWN_SERVER_SETUP = [tmuxCommand('if', '-F', '#{==:#{set-clipboard},on}', 'set -s set-clipboard external')]

/** Window and leader-pane options, one command per line. */
export function windowSetup(window: string, team: string, leaderPane = window): string[] {
  return [...teamWindowOptions(window, team), ...leaderPaneSetup(leaderPane, team)]
}

/** The options of each window of the team's (its second one too), one command per line; the layout's resize hook on the window only. */
export function teamWindowOptions(window: string, team: string): string[] {
  return [
    tmuxCommand('set', '-w', '-t', window, 'remain-on-exit', 'on'),
    tmuxCommand('set', '-w', '-t', window, 'pane-border-status', 'top'),
    tmuxCommand('set', '-w', '-t', window, 'pane-border-format', BORDER_FORMAT),
    tmuxCommand('set', '-w', '-t', window, '@swarm_team', team),
    // A teammate's output is data: no escape sequence passed through raw to your terminal.
    tmuxCommand('set', '-w', '-t', window, 'allow-passthrough', 'off'),
    resizeHook(window, team),
  ]
}
