/**
 * Lines wrapped on word boundaries to a terminal's width, so tmux never cuts a word at the pane's
 * edge: widths count visible characters only (swarm's own colour codes do not count), a word
 * wider than the line is split, never dropped, its pieces ending in SPLIT_MARK, and continuation
 * lines are indented.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: swarm's own SGR colour codes are what is skipped
const SGR = /\x1b\[[0-9;]*m/g

/** How continuation lines of a wrapped line start: deeper than any line of swarm's own (2 spaces). */
export const CONTINUATION = '    '

/** Ends each piece of a word split across lines, so a split is never mistaken for a space. */
export const SPLIT_MARK = '↩'

const SGR_HERE = new RegExp(SGR.source, 'y')

/** `s` without swarm's colour codes. */
export function withoutColors(s: string): string {
  return s.replace(SGR, '')
}

/** Visible width: code points, colour codes not counted. */
export function visibleWidth(s: string): number {
  return [...withoutColors(s)].length
}

/**
 * `text` (one line or many) with every line wider than `width` broken at spaces. Colour codes
 * stay where they are: a terminal keeps a colour across a line break. Without a width: unchanged.
 */
export function wrapLines(text: string, width: number | undefined): string {
  if (!width || width < MIN_WRAP_WIDTH) return text
  return text
    .split('\n')
    .map((line) => wrapLine(line, width))
    .join('\n')
}

/** Below this a pane is too narrow to wrap into: lines are left to the terminal. */
const MIN_WRAP_WIDTH = 20

function wrapLine(line: string, width: number): string {
  if (visibleWidth(line) <= width) return line
  const indent = /^ */.exec(line)![0]
  const cont = indent.length > CONTINUATION.length ? indent : CONTINUATION
  const lines: string[] = []
  let current = indent
  let used = indent.length
  const start = () => {
    lines.push(current.trimEnd())
    current = cont
    used = cont.length
  }
  for (const word of line.slice(indent.length).split(' ')) {
    let w = word
    const ww = visibleWidth(w)
    const sep = used > (lines.length ? cont.length : indent.length) ? 1 : 0
    if (used + sep + ww > width && sep) start()
    else if (sep) {
      current += ' '
      used++
    }
    // A word wider than the room left on a fresh line: in marked pieces, never cut off.
    while (used + visibleWidth(w) > width) {
      const [head, rest] = splitVisible(w, width - used - SPLIT_MARK.length)
      current += head + SPLIT_MARK
      start()
      w = rest
    }
    current += w
    used += visibleWidth(w)
  }
  lines.push(current)
  return lines.join('\n')
}

/** The first `n` visible characters of `s` (colour codes go with them) and the rest. */
function splitVisible(s: string, n: number): [string, string] {
  let i = 0
  let seen = 0
  while (i < s.length && seen < n) {
    SGR_HERE.lastIndex = i
    const code = SGR_HERE.exec(s)
    if (code) i += code[0].length
    else {
      i += s.codePointAt(i)! > 0xffff ? 2 : 1
      seen++
    }
  }
  return [s.slice(0, i), s.slice(i)]
}
