import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { defineTool, resolveToolPath } from '../tool.js'
import { globToRegExp } from './glob-pattern.js'
import { looksBinary } from './text-file.js'
import { walkFiles, type WalkedFile } from './walk.js'

/** Files larger than this are skipped (generated bundles, logs). */
export const MAX_GREP_FILE_BYTES = 10 * 1024 * 1024
export const MAX_GREP_OUTPUT_CHARS = 30_000
const MAX_MATCH_LINE_CHARS = 500

const inputSchema = z.object({
  pattern: z.string().min(1).describe('The regular expression to search for (JavaScript syntax), e.g. "function\\s+\\w+"'),
  path: z.string().optional().describe('File or directory to search in (default: the working directory)'),
  glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}"'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('"content" shows matching lines, "files_with_matches" lists files (default), "count" counts matching lines per file'),
  '-i': z.boolean().optional().describe('Case-insensitive search'),
  '-n': z.boolean().optional().describe('Show line numbers in content mode (default true)'),
  '-A': z.number().int().nonnegative().optional().describe('Lines of context after each match (content mode)'),
  '-B': z.number().int().nonnegative().optional().describe('Lines of context before each match (content mode)'),
  '-C': z.number().int().nonnegative().optional().describe('Lines of context around each match (content mode)'),
  head_limit: z.number().int().positive().optional().describe('Return only the first N lines / files / counts'),
})
type GrepInput = z.output<typeof inputSchema>

export const grepTool = defineTool({
  name: 'Grep',
  description: [
    'Searches file contents with a regular expression (JavaScript syntax, matched line by line).',
    'output_mode: "files_with_matches" (default) lists matching files, "content" shows matching lines as path:line:text, "count" gives matches per file.',
    'Filter files with glob (a name pattern like "*.ts" matches in every directory; a pattern with / matches the relative path).',
    'Binary files, files over 10 MB, node_modules and .git are skipped. Results are sorted by path.',
  ].join('\n'),
  inputSchema,
  kind: 'read',
  summarize: (input) => `/${input.pattern}/${input['-i'] ? 'i' : ''}${input.path ? ` in ${input.path}` : ''}`,
  paths: (input, ctx) => [resolveToolPath(ctx, input.path ?? '.')],
  async execute(input, ctx) {
    let regex: RegExp
    try {
      regex = new RegExp(input.pattern, input['-i'] ? 'i' : '')
    } catch (err) {
      throw new Error(`Invalid regular expression: ${(err as Error).message}`)
    }
    const target = resolveToolPath(ctx, input.path ?? '.')
    const stat = await fs.stat(target).catch(() => undefined)
    if (!stat) throw new Error(`Path does not exist: ${target}`)
    const files: WalkedFile[] = stat.isDirectory()
      ? (await walkFiles(target, { signal: ctx.signal, accept: globFilter(input.glob) })).files
      : [{ abs: target, rel: path.basename(target) }]

    const mode = input.output_mode ?? 'files_with_matches'
    const entries: string[] = []
    let total = 0
    let matchedFiles = 0
    for (const file of files) {
      ctx.signal.throwIfAborted()
      const lines = await readTextLines(file.abs)
      if (!lines) continue
      const hits = matchingLines(lines, regex, mode === 'files_with_matches')
      if (hits.length === 0) continue
      matchedFiles++
      total += hits.length
      if (mode === 'files_with_matches') entries.push(file.abs)
      else if (mode === 'count') entries.push(`${file.abs}:${hits.length}`)
      else entries.push(...contentLines(file.abs, lines, hits, input))
    }
    return render(entries, mode, { total, matchedFiles, headLimit: input.head_limit })
  },
})

/** rg's rule: a glob without `/` matches a file name anywhere; with `/`, the relative path. */
function globFilter(glob: string | undefined): ((rel: string) => boolean) | undefined {
  if (!glob) return undefined
  const re = globToRegExp(glob)
  return glob.includes('/') ? (rel) => re.test(rel) : (rel) => re.test(rel.slice(rel.lastIndexOf('/') + 1))
}

async function readTextLines(file: string): Promise<string[] | undefined> {
  try {
    const stat = await fs.stat(file)
    if (stat.size > MAX_GREP_FILE_BYTES) return undefined
    const buf = await fs.readFile(file)
    if (looksBinary(buf)) return undefined
    const lines = buf.toString('utf8').split(/\r?\n/)
    if (lines.at(-1) === '') lines.pop() // the final newline ends the last line; it starts none
    return lines
  } catch {
    return undefined // unreadable or removed during the search
  }
}

/** 0-based indexes of matching lines; only the first when `firstOnly`. */
function matchingLines(lines: string[], regex: RegExp, firstOnly: boolean): number[] {
  const hits: number[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!regex.test(lines[i]!)) continue
    hits.push(i)
    if (firstOnly) break
  }
  return hits
}

/** ripgrep's layout: `path:n:text` for matches, `path-n-text` for context, `--` between groups. */
function contentLines(file: string, lines: string[], hits: number[], input: GrepInput): string[] {
  const after = input['-A'] ?? input['-C'] ?? 0
  const before = input['-B'] ?? input['-C'] ?? 0
  const numbers = input['-n'] ?? true
  const hitSet = new Set(hits)
  const out: string[] = []
  let lastShown = -1
  for (const hit of hits) {
    const from = Math.max(hit - before, lastShown + 1)
    const to = Math.min(hit + after, lines.length - 1)
    if (lastShown >= 0 && from > lastShown + 1 && (before > 0 || after > 0)) out.push('--')
    for (let i = from; i <= to; i++) {
      const sep = hitSet.has(i) ? ':' : '-'
      const text = lines[i]!.length > MAX_MATCH_LINE_CHARS ? `${lines[i]!.slice(0, MAX_MATCH_LINE_CHARS)}…` : lines[i]!
      out.push(numbers ? `${file}${sep}${i + 1}${sep}${text}` : `${file}${sep}${text}`)
    }
    lastShown = Math.max(lastShown, to)
  }
  return out
}

function render(
  entries: string[],
  mode: NonNullable<GrepInput['output_mode']>,
  info: { total: number; matchedFiles: number; headLimit?: number },
): string {
  if (entries.length === 0) return mode === 'count' ? 'No matches found (0 occurrences)' : 'No matches found'
  let shown = info.headLimit ? entries.slice(0, info.headLimit) : entries
  const notes: string[] = []
  if (shown.length < entries.length) notes.push(`(showing the first ${shown.length} of ${entries.length}; head_limit applied)`)
  let text = shown.join('\n')
  if (text.length > MAX_GREP_OUTPUT_CHARS) {
    const cut = text.lastIndexOf('\n', MAX_GREP_OUTPUT_CHARS)
    shown = text.slice(0, cut > 0 ? cut : MAX_GREP_OUTPUT_CHARS).split('\n')
    text = shown.join('\n')
    notes.push(`(output truncated at ${MAX_GREP_OUTPUT_CHARS} characters; narrow the search with path, glob or head_limit)`)
  }
  const header =
    mode === 'files_with_matches'
      ? `Found ${info.matchedFiles} file${info.matchedFiles === 1 ? '' : 's'}\n`
      : mode === 'count'
        ? `Found ${info.total} matching line${info.total === 1 ? '' : 's'} in ${info.matchedFiles} file${info.matchedFiles === 1 ? '' : 's'}\n`
        : ''
  return header + text + (notes.length ? `\n\n${notes.join('\n')}` : '')
}
