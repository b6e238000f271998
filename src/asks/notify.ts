import { LEAD_NAME, agentId } from '../home/paths.js'
import { runCommand } from '../process/launch.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { shortRequestId } from '../home/request-id.js'
import { clipped } from '../terminal/clip.js'

/** How long a tmux `display-message` stays on the attached clients. */
export const TMUX_MESSAGE_MS = 5_000
/** tmux answers in a few ms; a hung server must not hold the request up. */
const TMUX_TIMEOUT_MS = 2_000
const MAX_TEXT = 160

/** What a notification says about a request. */
export interface NotifiableRequest {
  agent: string
  toolName: string
  kind?: 'permission' | 'plan'
  /** The input on one line (`npm test`, a file path); cut here, saying so, when it does not fit. */
  summary?: string
  /** The request's id: shown by its short id, the one `swarm perms approve` and `/approve` take. */
  id?: string
}

/** `[7a2a0f] alice asks to use Bash: npm test` / `alice asks team-lead to approve a plan` — one line, no control characters. */
export function notificationText(r: NotifiableRequest): string {
  const text =
    r.kind === 'plan' ? `${r.agent} asks team-lead to approve a plan` : `${r.agent} asks to use ${r.toolName}${r.summary ? `: ${r.summary}` : ''}`
  const short = r.id ? sanitize(shortRequestId(r.id)) : undefined
  return (short ? `[${short}] ` : '') + clipped(sanitize(text), MAX_TEXT, short ? `/show ${short}` : undefined)
}

/**
 * Rings the human at the leader's terminal: BEL, then an OSC 9 desktop notification
 * (`ESC ] 9 ; text BEL`), wrapped in tmux's DCS passthrough when the leader runs inside tmux
 * (tmux drops a bare OSC 9). The leader console calls this with its own terminal stream.
 */
export function notifyHuman(request: NotifiableRequest, stream: { write(chunk: string): unknown }, options: { env?: NodeJS.ProcessEnv } = {}): void {
  const env = options.env ?? process.env
  const osc = `\x1b]9;swarm: ${notificationText(request)}\x07`
  const wrapped = env.TMUX ? `\x1bPtmux;${osc.replaceAll('\x1b', '\x1b\x1b')}\x1b\\` : osc
  stream.write('\x07' + wrapped)
}

/**
 * Shows a `display-message` naming the teammate and the tool to every client attached to the
 * team's tmux session that does not show the leader's pane. Inside tmux (`$TMUX` set: a swarm
 * pane, or the user's own session) the server comes from `$TMUX` and the session from
 * `$TMUX_PANE`; otherwise it is swarm's own server (`tmux -L ${SWARM_TMUX_SOCKET ?? 'swarm'}`,
 * TMUX_TMPDIR respected) and session `swarm-<team>`. tmux freezes a client's whole screen while a
 * message is on its status line (until it times out or a key is pressed), and this message races
 * the console drawing the prompt: where the leader's pane is on screen the prompt itself is the
 * notice, and a message there would hide it for TMUX_MESSAGE_MS. Never throws: no tmux, no
 * server or no client is simply no notification. Resolves with the number of clients notified.
 */
export async function notifyTmuxClients(request: NotifiableRequest & { team: string }, options: { env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  const env = options.env ?? process.env
  const server = env.TMUX ? [] : ['-L', env.SWARM_TMUX_SOCKET || 'swarm']
  const target = env.TMUX && env.TMUX_PANE ? env.TMUX_PANE : `swarm-${request.team}`
  try {
    // One call: each client with the window it shows, and where the leader's pane is.
    const listed = await tmux(
      [
        ...server,
        ...['list-clients', '-t', target, '-F', 'client\t#{client_name}\t#{window_id}', ';'],
        ...['list-panes', '-s', '-t', target, '-F', 'pane\t#{window_id}\t#{window_zoomed_flag}\t#{pane_active}\t#{@swarm_agent}'],
      ],
      env,
    )
    if (listed === undefined) return 0
    const rows = listed.split('\n').map((l) => l.split('\t'))
    const shown = leaderWindows(rows, agentId(LEAD_NAME, request.team))
    const clients = rows.filter(([kind, , window]) => kind === 'client' && !shown.has(window)).map(([, name]) => name)
    if (clients.length === 0) return 0
    // display-message expands #{…} formats: double every # so the text shows as written.
    const text = `swarm: ${notificationText(request)} — swarm perms ${request.team}`.replace(/#/g, '##')
    const args = clients.flatMap((c, i) => [...(i ? [';'] : []), 'display-message', '-c', c, '-d', String(TMUX_MESSAGE_MS), text])
    return (await tmux([...server, ...args], env)) === undefined ? 0 : clients.length
  } catch {
    // A notification is best effort: whatever goes wrong, the request itself goes on.
    return 0
  }
}

/** The windows that show the leader's pane: it is in them, and no other pane of theirs is zoomed. */
function leaderWindows(rows: string[][], leader: string): Set<string> {
  const windows = new Set<string>()
  for (const [kind, window, zoomed, active, agent] of rows) {
    if (kind === 'pane' && agent === leader && (zoomed !== '1' || active === '1')) windows.add(window)
  }
  return windows
}

/** stdout of one tmux command; undefined when it fails, is missing or hangs (killed after the timeout). */
async function tmux(args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const r = await runCommand('tmux', args, { env, timeoutMs: TMUX_TIMEOUT_MS })
    return r.code === 0 ? r.stdout : undefined
  } catch {
    return undefined // timed out: its group was killed
  }
}

/**
 * One line, every control shown visibly (terminalSafe): what a model wrote may not drive the
 * human's terminal. A newline shows as `⏎`, not a space: it may start a second command.
 */
export function sanitize(s: string): string {
  return terminalSafe(s.trim(), { singleLine: true })
}
