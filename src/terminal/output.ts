import pc from 'picocolors'
import { paintAgent } from './colors.js'
import { terminalSafe } from './neutralize.js'

/** Colour only when stdout is a TTY and NO_COLOR is not set. */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR
}

export const colors = pc.createColors(useColor())

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

export function println(line = ''): void {
  process.stdout.write(line + '\n')
}

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
