import { agentId as makeAgentId } from '../home/paths.js'
import { memberMarker } from '../home/member-marker.js'
import { markerEnv } from '../process/marker.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { runCommand } from '../process/launch.js'
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
 * Opens the views of `specs` in the session of the leader's pane ($TMUX_PANE of this process),
 * each tagged as its teammate's pane (@swarm_agent: the layout, `attach` and `team delete` find it
 * as any teammate's) and carrying the teammate's marker — three tmux clients for the lot (the
 * panes, every new window in one `source-file`, their setup in another), not a few per view. A
 * live view of a teammate already there (its leader started again) is kept. Returns the pane id of
 * each spec, in order ('' for one tmux did not make: the error then names them).
 */
export async function openTmuxViews(specs: readonly ViewSpec[], env: Env): Promise<string[]> {
  const leaderPane = env.TMUX_PANE
  if (!env.TMUX || !leaderPane) throw new Error('a teammate view opens only from a leader running in tmux')
  const client = new TmuxClient({ socket: resolveSocket(env), env })
  const panes = await listPanes(client)
  const session = panes.find((p) => p.paneId === leaderPane)?.session
  if (session === undefined) throw new Error(`the leader's pane ${leaderPane} is not on this tmux server`)
  const ids = specs.map((spec) => makeAgentId(spec.name, spec.team))
  const live = new Map(panes.filter((p) => !p.dead && p.agent !== '').map((p) => [p.agent, p.paneId]))
  const missing = specs.filter((_, k) => !live.has(ids[k]))
  if (missing.length) {
    // A view ends with the process that opened it (the leader, its teammates inside it): one
    // killed with SIGKILL leaves no view showing its teammates as if they still ran.
    const endsWith = (await tailEndsWithProcess(env)) ? [`--pid=${process.pid}`] : []
    // Each in a window of its own, marked as a new pane's of the team: the layout then places it
    // beside the leader or on a page, as it places a process teammate's pane (a split could find no room).
    const lines = missing.map((spec) =>
      tmuxCommand(
        'new-window',
        '-d',
        '-t',
        `${session}:`,
        '-P',
        '-F',
        `${formatEscape(makeAgentId(spec.name, spec.team))}\t#{pane_id}\t#{window_id}`,
        ...envArgs(markerEnv(memberMarker(spec.team, spec.name, env))),
        'tail',
        ...endsWith,
        '-n',
        String(VIEW_HISTORY_LINES),
        '-F',
        spec.file,
      ),
    )
    const r = await client.exec(['source-file', '-'], lines.join('\n') + '\n', { commands: lines.length })
    const setup: string[] = []
    for (const line of r.stdout.split('\n')) {
      const [agentId = '', paneId = '', windowId = ''] = line.split('\t')
      const spec = missing.find((m) => makeAgentId(m.name, m.team) === agentId)
      if (!spec || !paneId.startsWith('%')) continue
      live.set(agentId, paneId)
      setup.push(...viewSetup(spec, agentId, paneId, windowId))
    }
    if (setup.length) await client.source(setup, { what: 'view setup' })
    const failed = missing.filter((m) => !live.has(makeAgentId(m.name, m.team)))
    if (failed.length) throw client.failure(`new-window for ${failed.map((m) => m.name).join(', ')}`, r.stderr || 'no pane id printed')
  }
  return ids.map((id) => live.get(id) ?? '')
}

let tailPid: Promise<boolean> | undefined

/**
 * Whether this machine's `tail` ends when a process does (`--pid`, GNU coreutils; BSD's and
 * BusyBox's have none): asked once per process, with a run that reads nothing.
 */
function tailEndsWithProcess(env: Env): Promise<boolean> {
  tailPid ??= runCommand('tail', [`--pid=${process.pid}`, '-n', '0', '/dev/null'], { env, timeoutMs: 5_000 }).then(
    (r) => r.code === 0,
    () => false,
  )
  return tailPid
}

/**
 * Closes hosted teammates' views (their teammates ended): one list, then one `kill-pane` each of
 * those still there and still tagged as their teammate's — a pane gone meanwhile, or another's, is left.
 */
export async function closeTmuxViews(views: ReadonlyArray<{ paneId: string; agentId: string }>, env: Env): Promise<void> {
  if (!views.length) return
  const client = new TmuxClient({ socket: resolveSocket(env), env })
  const panes = new Map((await listPanes(client)).map((p) => [p.paneId, p.agent]))
  const lines = views.filter((v) => panes.get(v.paneId) === v.agentId).map((v) => tmuxCommand('kill-pane', '-t', v.paneId))
  if (lines.length) await client.source(lines, { what: 'kill-pane' })
}

/** A view's title, options and identity, and its window marked as a new pane's of its team for the layout. */
function viewSetup(spec: ViewSpec, agentId: string, paneId: string, windowId: string): string[] {
  const title = terminalSafe(spec.name, { singleLine: true })
  return [
    tmuxCommand('select-pane', '-t', paneId, '-T', formatEscape(title)),
    tmuxCommand('set', '-p', '-t', paneId, 'allow-passthrough', 'off'),
    // A view that ends (its teammate's leader gone, the team reaped) leaves no dead pane behind.
    tmuxCommand('set', '-p', '-t', paneId, 'remain-on-exit', 'off'),
    tmuxCommand('set', '-p', '-t', paneId, '@agent_color', TMUX_COLORS[spec.color ?? ''] ?? spec.color ?? 'default'),
    tmuxCommand('set', '-p', '-t', paneId, '@agent_name', title),
    tmuxCommand('set', '-p', '-t', paneId, '@swarm_agent', agentId),
    tmuxCommand('set', '-w', '-t', windowId, OVERFLOW_OPTION, spec.team),
    tmuxCommand('set', '-w', '-t', windowId, PAGE_OPTION, '0'),
  ]
}
