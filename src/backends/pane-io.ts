/**
 * Typing into one pane the way a person would, whatever backend shows it: a bracketed paste of the
 * whole text (or of consecutive pieces), single keys, literal text, and reading the visible screen.
 * The text is data: control characters are made visible before any backend sees it, so bracketed
 * paste keeps a leading `/` or `@`, newlines and escape-like bytes from acting as keys.
 */
import { UsageError } from '../errors.js'
import type { PaneDriver, PasteChunk, PastePiece } from './types.js'

export class PaneIo {
  constructor(private readonly driver: PaneDriver) {}

  /**
   * Pastes `text` as one bracketed paste — or, with `chunk`, as consecutive bracketed pastes of at
   * most that size, which together insert the same text.
   */
  async paste(text: string, chunk?: PasteChunk): Promise<void> {
    // C0 controls other than newline and tab would be keys even inside a paste; they are data, so shown as text.
    const safe = visibleControls(text.replace(/\r\n?/g, '\n'))
    for (const piece of chunk ? pastePieces(safe, chunk) : [safe]) await this.driver.paste(piece as PastePiece)
  }

  /** Sends key names (`Enter`, `C-c`, `Escape`…), one call. */
  async keys(keys: readonly string[]): Promise<void> {
    for (const k of keys) if (!/^[A-Za-z0-9-]{1,16}$/.test(k)) throw new UsageError(`invalid key name ${JSON.stringify(k)}`)
    if (keys.length) await this.driver.keys(keys)
  }

  /** Sends text literally, as typed (a line at the leader console). */
  async type(text: string): Promise<void> {
    await this.driver.type(text)
  }

  /** The visible screen, plain text. */
  async screen(): Promise<string> {
    return this.driver.screen()
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
