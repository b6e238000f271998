/**
 * Typing into one tmux pane the way a person would: a bracketed paste of the whole text (`tmux
 * load-buffer -` on stdin, so a message never reaches an argv, then `paste-buffer -p`), single
 * keys, and reading the visible screen and title. The text is data: bracketed paste keeps a
 * leading `/` or `@`, newlines and escape-like bytes from acting as keys.
 */
import { randomBytes } from 'node:crypto'
import { TmuxClient, type TmuxSocket } from '../backends/tmux-client.js'
import { UsageError } from '../errors.js'
import type { PasteChunk } from './types.js'

export interface PaneTarget {
  socket: TmuxSocket
  paneId: string
}

/** The pane this process runs in, from tmux's own variables ($TMUX = socket,pid,session; $TMUX_PANE). */
export function ownPane(env: NodeJS.ProcessEnv): PaneTarget | undefined {
  const socket = env.TMUX?.split(',')[0]
  const paneId = env.TMUX_PANE
  if (!socket || !paneId) return undefined
  return { socket: { path: socket }, paneId }
}

export class PaneIo {
  private readonly tmux: TmuxClient
  constructor(
    readonly target: PaneTarget,
    env: NodeJS.ProcessEnv,
  ) {
    this.tmux = new TmuxClient({ socket: target.socket, env })
  }

  /**
   * Pastes `text` as one bracketed paste (the buffer is deleted after) — or, with `chunk`, as
   * consecutive bracketed pastes of at most that size, which together insert the same text.
   */
  async paste(text: string, chunk?: PasteChunk): Promise<void> {
    // C0 controls other than newline and tab would be keys even inside a paste; they are data, so shown as text.
    const safe = visibleControls(text.replace(/\r\n?/g, '\n'))
    for (const piece of chunk ? pastePieces(safe, chunk) : [safe]) {
      const buffer = `swarm-${randomBytes(4).toString('hex')}`
      const load = await this.tmux.exec(['load-buffer', '-b', buffer, '-'], piece)
      if (load.code !== 0) throw this.tmux.failure('load-buffer', load.stderr)
      await this.tmux.run(['paste-buffer', '-p', '-d', '-b', buffer, '-t', this.target.paneId], 'paste-buffer')
    }
  }

  /** Sends tmux key names (`Enter`, `C-c`, `Escape`…), one call. */
  async keys(keys: readonly string[]): Promise<void> {
    for (const k of keys) if (!/^[A-Za-z0-9-]{1,16}$/.test(k)) throw new UsageError(`invalid key name ${JSON.stringify(k)}`)
    if (keys.length) await this.tmux.run(['send-keys', '-t', this.target.paneId, ...keys], 'send-keys')
  }

  /** Sends text literally (`send-keys -l`), for a CLI's quit command. */
  async type(text: string): Promise<void> {
    await this.tmux.run(['send-keys', '-l', '-t', this.target.paneId, text], 'send-keys')
  }

  /** The visible screen, plain text. */
  async screen(): Promise<string> {
    return this.tmux.run(['capture-pane', '-p', '-J', '-t', this.target.paneId], 'capture-pane')
  }

  async title(): Promise<string> {
    return (await this.tmux.run(['display-message', '-p', '-t', this.target.paneId, '#{pane_title}'], 'display-message')).replace(/\n$/, '')
  }
}

/** `text` cut into pieces within `chunk`, in order, joined back they are `text`; never inside a code point. */
export function pastePieces(text: string, chunk: PasteChunk): string[] {
  const pieces: string[] = []
  let piece = ''
  let chars = 0
  let lines = 1
  for (const ch of text) {
    if (chars > 0 && (chars >= chunk.chars || (ch === '\n' && lines >= chunk.lines))) {
      pieces.push(piece)
      piece = ''
      chars = 0
      lines = 1
    }
    piece += ch
    chars++
    if (ch === '\n') lines++
  }
  if (piece) pieces.push(piece)
  return pieces
}

/** C0 controls other than newline and tab, and DEL, written as ^X: inside a paste they would still be keys. */
function visibleControls(text: string): string {
  let out = ''
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    out += (code < 0x20 && ch !== '\n' && ch !== '\t') || code === 0x7f ? `^${String.fromCharCode(code ^ 0x40)}` : ch
  }
  return out
}
