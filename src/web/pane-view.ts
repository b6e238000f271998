import path from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import pc from 'picocolors'
import { NotFoundError } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { backendOf, paneRefOf } from '../backends/directory.js'
import { findBackend, paneIo } from '../backends/registry.js'
import { readTranscript, transcriptPath, type TranscriptEvent } from '../agent/transcript.js'
import { formatEvent } from '../agent/transcript-format.js'
import { readTeam } from '../teams/team-store.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { NOFOLLOW, openNoFollow } from '../util/fs.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { watchPath } from '../watch/path-watch.js'

/**
 * What the page's read-only terminal shows of one teammate. A pane: its screen as tmux draws it
 * now (capture-pane through the backend's PaneIo), then the bytes the pane prints from then on —
 * tmux pipes them to the member's `pane.log` (pipe-pane), tailed here from the offset it had
 * when the screen was taken. An in-process teammate: its transcript, as `swarm logs` prints it
 * (formatEvent). All of it neutralised as the leader console neutralises (terminalSafe); a
 * pane's colours (SGR, and nothing else) are kept, xterm.js being a terminal of its own.
 */

export interface MemberView {
  source: 'pane' | 'transcript'
  text: string
}

/** Transcript events shown of an in-process teammate: the recent ones. */
const TRANSCRIPT_EVENTS = 200
/** At most this much of a burst of pane output is sent at once (the rest follows in the next read). */
const PANE_CHUNK = 256 * 1024

const plain = pc.createColors(false)

interface PaneMember {
  source: 'pane'
  screen(): Promise<string>
  log: string
}

async function locate(team: string, name: string, env: NodeJS.ProcessEnv, source?: 'transcript'): Promise<PaneMember | { source: 'transcript' }> {
  const config = await readTeam(team, env)
  const m = config.members.find((x) => x.name === name)
  if (!m) throw new NotFoundError(`no member ${name} in team ${team}`)
  const type = backendOf(m)
  const ref = paneRefOf(m, config)
  if (source !== 'transcript' && type && ref?.paneId && findBackend(type)?.kind === 'pane') {
    const io = paneIo(type, ref, env)
    return { source: 'pane', screen: () => io.screen(), log: path.join(agentDir(team, name, env), 'pane.log') }
  }
  return { source: 'transcript' }
}

/** An in-process (or any) teammate's transcript as `swarm logs` shows it, the recent events. */
async function transcriptText(team: string, name: string, env: NodeJS.ProcessEnv): Promise<string> {
  const events = await readTranscript(transcriptPath(team, name, env)).catch(() => [] as TranscriptEvent[])
  return events
    .slice(-TRANSCRIPT_EVENTS)
    .map((e) => formatEvent(e, plain))
    .join('\n')
}

/** Bytes of the pane's log from `offset` on (at most PANE_CHUNK), and where the next read starts; a shorter log starts over. */
async function readLog(file: string, offset: number): Promise<{ bytes: Buffer; next: number; restarted: boolean }> {
  const h = await openNoFollow(file, NOFOLLOW.read).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  if (!h) return { bytes: Buffer.alloc(0), next: 0, restarted: offset > 0 }
  try {
    const size = (await h.stat()).size
    const restarted = size < offset
    const from = restarted ? 0 : offset
    const length = Math.min(size - from, PANE_CHUNK)
    const bytes = Buffer.alloc(length)
    const { bytesRead } = length > 0 ? await h.read(bytes, 0, length, from) : { bytesRead: 0 }
    return { bytes: bytes.subarray(0, bytesRead), next: from + bytesRead, restarted }
  } finally {
    await h.close()
  }
}

/**
 * Pane output as the page may write it: `\r\n` (the tty's line ends) as `\n`, then terminalSafe
 * keeping SGR. A trailing piece that may be the start of a sequence or of `\r\n` is held back
 * until the next chunk, so a colour split between two reads is not shown as text.
 */
export class PaneNeutraliser {
  private readonly decoder = new StringDecoder('utf8')
  private held = ''

  push(bytes: Buffer): string {
    let text = this.held + this.decoder.write(bytes)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an unfinished ESC sequence or a lone CR at the end
    const tail = /(\x1b(\[[0-9;:]{0,64})?|\r)$/.exec(text)
    this.held = tail ? tail[0] : ''
    if (tail) text = text.slice(0, tail.index)
    return terminalSafe(text.replace(/\r\n/g, '\n'), { keepSgr: true })
  }
}

export interface ViewSink {
  /** Draw this from scratch (the first view, a transcript that changed, a pane log that started over). */
  view(v: MemberView): void
  /** Append this to what is drawn (a pane's new output). */
  more(text: string): void
}

/**
 * Follows one member for one open viewer: the first view now, then its changes — followed through
 * the member's directory (src/watch: one watch and a slow poll), where tmux appends pane.log and
 * the agent its transcript. Reads are one at a time; close() stops it.
 */
export async function followMember(
  team: string,
  name: string,
  env: NodeJS.ProcessEnv,
  sink: ViewSink,
  source?: 'transcript',
): Promise<{ close(): void }> {
  const where = await locate(team, name, env, source)
  let reading = Promise.resolve()
  let closed = false
  let update: () => Promise<void>
  if (where.source === 'pane') {
    // The log's end before the screen is taken: output in between is shown twice at worst, never lost.
    let offset = await logEnd(where.log)
    sink.view({ source: 'pane', text: terminalSafe((await where.screen()).replace(/\s+$/, '')) + '\n' })
    const neutraliser = new PaneNeutraliser()
    update = async () => {
      for (;;) {
        const r = await readLog(where.log, offset)
        if (closed) return
        if (r.restarted) sink.view({ source: 'pane', text: '' })
        offset = r.next
        if (r.bytes.length === 0) return
        const text = neutraliser.push(r.bytes)
        if (text) sink.more(text)
        if (r.bytes.length < PANE_CHUNK) return
      }
    }
  } else {
    let last = await transcriptText(team, name, env)
    sink.view({ source: 'transcript', text: last })
    update = async () => {
      const next = await transcriptText(team, name, env)
      if (closed || next === last) return
      last = next
      sink.view({ source: 'transcript', text: next })
    }
  }
  const kick = () => {
    reading = reading.then(update).catch((err) => sink.more(terminalSafe(`\n(${String((err as Error).message ?? err)})\n`)))
  }
  const watch = watchPath(agentDir(team, name, env), kick, { pollMs: WATCH_INTERVALS.logsFollow })
  return {
    close() {
      closed = true
      watch.close()
    },
  }
}

/** The pane log's size now (0 when there is none yet). */
async function logEnd(file: string): Promise<number> {
  const h = await openNoFollow(file, NOFOLLOW.read).catch(() => undefined)
  if (!h) return 0
  try {
    return (await h.stat()).size
  } finally {
    await h.close()
  }
}
