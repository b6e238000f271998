import fs from 'node:fs'
import pc from 'picocolors'
import { paintAgent } from './colors.js'
import { terminalSafe } from './neutralize.js'

/** Colour only when stdout is a TTY and NO_COLOR is not set. */
export function useColor(): boolean {
  // NO_COLOR first, as picocolors does: asking process.stdout creates it (and loads Node's streams).
  return !process.env.NO_COLOR && Boolean(process.stdout.isTTY)
}

export const colors = pc.createColors(useColor())

export function printJson(value: unknown): void {
  writeStdout(JSON.stringify(value, null, 2) + '\n')
}

export function println(line = ''): void {
  writeStdout(line + '\n')
}

/**
 * What commands print goes to fd 1 with write(2), as process.stdout does for files, pipes and
 * TTYs on POSIX when they take the data at once — without creating process.stdout, whose first
 * use loads Node's stream modules (~5 % of a `swarm status`, bench:cli). Once anything has used
 * process.stdout (whose writes may be queued on a full non-blocking pipe), or when fd 1 refuses a
 * plain write (EAGAIN, EPIPE), this and every later write go through process.stdout, in order.
 */
export function writeStdout(text: string): void {
  let rest = Buffer.from(text)
  if (!stdoutStreamUsed) {
    try {
      while (rest.length > 0) rest = rest.subarray(fs.writeSync(1, rest))
      return
    } catch {
      // the rest goes to process.stdout below: it waits out EAGAIN and reports EPIPE as it always did
    }
  }
  process.stdout.write(rest)
}

/** Whether process.stdout has been used: set by its getter, wrapped here once (the property is Node's, configurable). */
let stdoutStreamUsed = false
const stdoutProperty = Object.getOwnPropertyDescriptor(process, 'stdout')
const getStdout = stdoutProperty?.get
if (getStdout && stdoutProperty.configurable) {
  Object.defineProperty(process, 'stdout', {
    ...stdoutProperty,
    get() {
      stdoutStreamUsed = true
      return getStdout.call(process) as NodeJS.WriteStream
    },
  })
} else stdoutStreamUsed = true // replaced by someone else (a test runner): its stream only

/** Formats rows as aligned columns (no colour codes in widths); every cell is shown terminal-safe, on one line. */
export function table(cells: string[][]): string {
  const rows = cells.map((row) => row.map((cell) => terminalSafe(cell, { singleLine: true })))
  const widths: number[] = []
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length)
  }
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n')
}

/** Maps an agent colour name to a picocolors function. */
export function colorize(color: string | undefined, text: string): string {
  return paintAgent(colors, color, text)
}
