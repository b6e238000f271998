/**
 * The one place where text a teammate or a model controls becomes terminal-safe: every control
 * character but `\n` and `\t` (C0, DEL, C1) and the bidi overrides are shown in a visible form,
 * so no such text can move the cursor, clear the screen, set a title or draw a fake prompt.
 */

export interface TerminalSafeOptions {
  /** Also show `\n` and `\t` visibly (`⏎`, `⇥`): for one-line sinks (prompts, notifications, titles). */
  singleLine?: boolean
  /**
   * Keep colour and style sequences (SGR, `ESC[…m`) as they are — for a sink that is a terminal
   * emulator of its own (the web page's xterm.js). Only SGR: every other sequence is still shown
   * as data, and an SGR's conceal (8) is dropped so no text can be hidden.
   */
  keepSgr?: boolean
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
  const str = String(text)
  const plain = (t: string) => {
    const safe = t.replace(UNSAFE, visible)
    return options.singleLine ? safe.replace(UNSAFE_LINE, (c) => (c === '\n' ? '⏎' : '⇥')) : safe
  }
  if (!options.keepSgr) return plain(str)
  let out = ''
  let last = 0
  for (const m of str.matchAll(SGR)) {
    out += plain(str.slice(last, m.index)) + safeSgr(m[1])
    last = m.index + m[0].length
  }
  return out + plain(str.slice(last))
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: an SGR sequence starts with ESC
const SGR = /\x1b\[([0-9;:]{0,64})m/g

/** An SGR sequence without conceal (8); a colour's own parameters (38;5;8, 48;2;r;g;b) are kept whole. */
function safeSgr(params: string): string {
  if (params === '') return '\x1b[m'
  const tokens = params.split(';')
  const kept: string[] = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (['38', '48', '58'].includes(t)) {
      const n = tokens[i + 1] === '5' ? 2 : tokens[i + 1] === '2' ? 4 : 0
      kept.push(...tokens.slice(i, i + 1 + n))
      i += n
    } else if (t !== '8') kept.push(t)
  }
  return kept.length ? `\x1b[${kept.join(';')}m` : ''
}

function visible(c: string): string {
  const code = c.charCodeAt(0)
  if (code === 0x1b) return '␛'
  if (code < 0x20) return String.fromCharCode(0x2400 + code)
  if (code === 0x7f) return '␡'
  if (code <= 0x9f) return `\\x${code.toString(16)}`
  return `\\u${code.toString(16)}`
}
