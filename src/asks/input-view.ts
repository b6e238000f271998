import { terminalSafe } from '../terminal/neutralize.js'

/**
 * What a human deciding on a request reads: the request's whole input — a Bash command exactly as
 * it will run, an edit's file and text, pretty JSON otherwise — neutralised line by line (controls
 * shown as data, tabs as `⇥`), never whitespace-collapsed, never cut. Long ones are previewed.
 */

/** Past this many characters an input is long: the prompt shows its start and asks for `/show` (issue 23, finding 9). */
export const LONG_INPUT_CHARS = 2_000
/** Past this many lines an input is long, likewise. */
export const LONG_INPUT_LINES = 40

/** The whole input as text, not yet neutralised. */
export function inputText(input: Record<string, unknown>): string {
  const { command, file_path, content, old_string, new_string, description: _d, ...rest } = input
  const extra = (o: Record<string, unknown>) => (Object.keys(o).length ? [`with: ${JSON.stringify(o)}`] : [])
  if (typeof command === 'string') return [command, ...extra(noUndefined({ file_path, content, old_string, new_string, ...rest }))].join('\n')
  if (typeof file_path === 'string') {
    const parts = [`file: ${file_path}`]
    if (typeof old_string === 'string') parts.push('replace:', old_string, 'with:', String(new_string ?? ''))
    if (typeof content === 'string') parts.push('content:', content)
    if (Object.keys(rest).length) parts.push(JSON.stringify(rest, null, 2))
    return parts.join('\n')
  }
  return JSON.stringify(input, null, 2)
}

/** The text's lines, each neutralised (no byte a terminal acts on, tabs visible). */
export function neutralLines(text: string): string[] {
  return text.split('\n').map((l) => terminalSafe(l, { singleLine: true }))
}

/** Text on one neutralised line: newlines shown as `⏎`, tabs as `⇥`, nothing collapsed, nothing cut. */
export function oneNeutralLine(text: string): string {
  return terminalSafe(text, { singleLine: true })
}

/** What a prompt shows of an input's lines, and how much it leaves for `/show`. */
export interface InputPreview {
  shown: string[]
  hiddenLines: number
  hiddenChars: number
}

/** All of `lines` when the input is not long; else the first LONG_INPUT_LINES lines within LONG_INPUT_CHARS characters. */
export function previewInput(lines: string[]): InputPreview {
  const total = lines.reduce((n, l) => n + [...l].length, 0)
  if (lines.length <= LONG_INPUT_LINES && total <= LONG_INPUT_CHARS) return { shown: lines, hiddenLines: 0, hiddenChars: 0 }
  const shown: string[] = []
  let room = LONG_INPUT_CHARS
  for (const line of lines) {
    if (shown.length === LONG_INPUT_LINES || room <= 0) break
    const chars = [...line]
    shown.push(chars.slice(0, room).join(''))
    room -= chars.length
  }
  const shownChars = shown.reduce((n, l) => n + [...l].length, 0)
  const cutLast = shown.length > 0 && shown[shown.length - 1] !== lines[shown.length - 1] ? 1 : 0
  return { shown, hiddenLines: lines.length - shown.length + cutLast, hiddenChars: total - shownChars }
}

function noUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
}
