/**
 * The one place where text a teammate or a model controls becomes terminal-safe: every control
 * character but `\n` and `\t` (C0, DEL, C1) and the bidi overrides are shown in a visible form,
 * so no such text can move the cursor, clear the screen, set a title or draw a fake prompt.
 */

export interface TerminalSafeOptions {
  /** Also show `\n` and `\t` visibly (`⏎`, `⇥`): for one-line sinks (prompts, notifications, titles). */
  singleLine?: boolean
}

// C0 (but \t and \n, handled below), DEL, C1, and the Unicode bidi embeddings / overrides / isolates.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g
const UNSAFE_LINE = /[\t\n]/g

/**
 * `text` with every terminal control shown as data: ESC is `␛` (so `ESC[2J` reads `␛[2J`), other
 * C0 controls their control picture (`␍`, `␇`, …), DEL `␡`, C1 and bidi controls `\x9b` /
 * `\u202e`. Idempotent, and the result contains no byte a terminal acts on but `\n` and `\t`.
 */
export function terminalSafe(text: string, options: TerminalSafeOptions = {}): string {
  const safe = String(text).replace(UNSAFE, visible)
  return options.singleLine ? safe.replace(UNSAFE_LINE, (c) => (c === '\n' ? '⏎' : '⇥')) : safe
}

function visible(c: string): string {
  const code = c.charCodeAt(0)
  if (code === 0x1b) return '␛'
  if (code < 0x20) return String.fromCharCode(0x2400 + code)
  if (code === 0x7f) return '␡'
  if (code <= 0x9f) return `\\x${code.toString(16)}`
  return `\\u${code.toString(16)}`
}
