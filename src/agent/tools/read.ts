import { createReadStream } from 'node:fs'
import fs from 'node:fs/promises'
import { z } from 'zod'
import { defineTool, oneFileTool, resolveToolPath } from '../tool.js'
import { assertOutsideControlPlane } from './control-plane-guard.js'
import { formatBytes, looksBinary, readHead } from './text-file.js'

/** Lines returned when no `limit` is given (Claude Code's default). */
export const DEFAULT_READ_LINES = 2_000
/** Longer lines are cut, so one minified file cannot fill the context. */
export const MAX_LINE_CHARS = 2_000
/** Total characters of one result; the rest is left for another call with `offset`. */
export const MAX_READ_CHARS = 100_000

const inputSchema = z.object({
  file_path: z.string().min(1).describe('The path of the file to read (absolute, or relative to the working directory)'),
  offset: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('The line number to start reading from (1 = first line). Only give it for files too large to read at once'),
  limit: z.number().int().positive().optional().describe('The number of lines to read. Only give it for large files'),
})

export const readTool = defineTool({
  name: 'Read',
  description: [
    'Reads a file from the local filesystem.',
    `By default it reads up to ${DEFAULT_READ_LINES} lines from the start of the file; use offset and limit for long files.`,
    `Lines longer than ${MAX_LINE_CHARS} characters are truncated.`,
    'The result is numbered like `cat -n`: each line starts with its line number and a tab.',
    'It reads files only; use Bash with ls to list a directory. Binary files are refused.',
  ].join('\n'),
  inputSchema,
  ...oneFileTool('read'),
  async execute(input, ctx) {
    const file = resolveToolPath(ctx, input.file_path)
    await assertOutsideControlPlane(ctx, file)
    const stat = await fs.stat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new Error(`File does not exist: ${file}`)
      throw err
    })
    if (stat.isDirectory()) throw new Error(`${file} is a directory, not a file; use Bash with ls to list it`)
    if (stat.size === 0) return `(the file ${file} exists but is empty)`
    if (looksBinary(await readHead(file))) {
      throw new Error(`${file} looks like a binary file (${formatBytes(stat.size)}); Read shows text files only`)
    }
    return readLines(file, Math.max(1, input.offset ?? 1), input.limit ?? DEFAULT_READ_LINES, ctx.signal)
  },
})

/** Streams the file line by line, so a huge file with a small window costs little. */
async function readLines(file: string, first: number, limit: number, signal: AbortSignal): Promise<string> {
  // node:readline at the first Read, not at every agent's start (issue 25: 64 of them start at once).
  const { createInterface } = await import('node:readline')
  const stream = createReadStream(file, { encoding: 'utf8', signal })
  const lines = createInterface({ input: stream, crlfDelay: Infinity })
  const out: string[] = []
  let lineNo = 0
  let chars = 0
  let cutForSize = false
  let more = false
  try {
    for await (const line of lines) {
      lineNo++
      if (lineNo < first) continue
      if (out.length >= limit) {
        more = true
        break
      }
      const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}… [line truncated]` : line
      const numbered = `${String(lineNo).padStart(6)}\t${shown}`
      if (chars + numbered.length > MAX_READ_CHARS && out.length > 0) {
        cutForSize = true
        more = true
        break
      }
      out.push(numbered)
      chars += numbered.length + 1
    }
  } finally {
    lines.close()
    stream.destroy()
  }
  if (out.length === 0) {
    return `(the file has ${lineNo} line${lineNo === 1 ? '' : 's'}; offset ${first} is past its end)`
  }
  const last = first + out.length - 1
  let text = out.join('\n')
  if (more) {
    const why = cutForSize ? `the result reached ${MAX_READ_CHARS} characters` : `limit ${limit} reached`
    text += `\n\n(showing lines ${first}-${last}; ${why} — more lines follow, read them with offset ${last + 1})`
  }
  return text
}
