import { NotFoundError } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { backendOf, paneRefOf } from '../backends/directory.js'
import { findBackend, paneIo } from '../backends/registry.js'
import { readTranscript, transcriptPath, type TranscriptEvent } from '../agent/transcript.js'
import { readTeam } from '../teams/team-store.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { watchPath } from '../watch/path-watch.js'

/**
 * What the page's read-only terminal shows of one teammate: a pane's screen as tmux draws it
 * (capture-pane through the backend's PaneIo), or an in-process teammate's transcript as lines —
 * both neutralised as the leader console neutralises (terminalSafe), so nothing a teammate
 * printed is an escape sequence to xterm.js. Followed through the member's directory, where tmux
 * pipes the pane's output (pane.log) and the agent appends its transcript.
 */

export interface MemberView {
  source: 'pane' | 'transcript'
  text: string
}

/** Transcript lines shown of an in-process teammate: the recent ones. */
const TRANSCRIPT_LINES = 200

/** The member's pane screen when it has one (unless `source` asks for its transcript), else its transcript. */
export async function memberView(team: string, name: string, env: NodeJS.ProcessEnv, source?: 'transcript'): Promise<MemberView> {
  const config = await readTeam(team, env)
  const m = config.members.find((x) => x.name === name)
  if (!m) throw new NotFoundError(`no member ${name} in team ${team}`)
  const type = backendOf(m)
  const ref = paneRefOf(m, config)
  if (source !== 'transcript' && type && ref?.paneId && findBackend(type)?.kind === 'pane') {
    const screen = await paneIo(type, ref, env).screen()
    return { source: 'pane', text: terminalSafe(screen.replace(/\s+$/, '')) }
  }
  const events = await readTranscript(transcriptPath(team, name, env)).catch(() => [] as TranscriptEvent[])
  const lines = events.flatMap(eventLines).slice(-TRANSCRIPT_LINES)
  return { source: 'transcript', text: terminalSafe(lines.join('\n')) }
}

/** Calls `onChange` whenever the member's directory changes (and on a slow poll); close() stops it. */
export function followMember(team: string, name: string, env: NodeJS.ProcessEnv, onChange: () => void): { close(): void } {
  return watchPath(agentDir(team, name, env), () => onChange(), { pollMs: WATCH_INTERVALS.logsFollow })
}

/** A transcript event as the lines a person reads. */
function eventLines(e: TranscriptEvent): string[] {
  const time = e.t.slice(11, 19)
  switch (e.kind) {
    case 'message': {
      const content = e.message.content
      const texts = typeof content === 'string' ? [content] : content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
      return texts.length
        ? [
            `${time} ${e.message.role}:`,
            ...texts
              .join('\n')
              .split('\n')
              .map((l) => `  ${l}`),
          ]
        : []
    }
    case 'tool':
      return [`${time} ${e.isError ? '✗' : '✓'} ${e.tool} ${JSON.stringify(e.input)}`, ...e.output.split('\n').map((l) => `  ${l}`)]
    case 'state':
      return [`${time} ● ${e.state}${e.detail ? ` — ${e.detail}` : ''}`]
    case 'error':
      return [`${time} error ${e.errorType}: ${e.message}`]
    case 'start':
      return [`${time} start, model ${e.model}`]
    default:
      return []
  }
}
