import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { defineTool, resolveToolPath } from '../tool.js'
import { globToRegExp, hasGlobChars, splitStaticPrefix } from './glob-pattern.js'
import { walkFiles } from './walk.js'

/** Paths listed at most; the note tells the model to narrow the pattern. */
export const MAX_GLOB_RESULTS = 100

const inputSchema = z.object({
  pattern: z.string().min(1).describe('The glob pattern to match files against, e.g. "**/*.ts" or "src/**/*.{ts,tsx}"'),
  path: z.string().optional().describe('The directory to search in (default: the working directory)'),
})

export const globTool = defineTool({
  name: 'Glob',
  description: [
    'Fast file pattern matching. Supports ** (any directories), * and ? (within a name), [abc] and {a,b}.',
    'Returns matching file paths (absolute), most recently modified first.',
    `At most ${MAX_GLOB_RESULTS} paths are returned. node_modules and .git are not searched unless the pattern starts inside them.`,
  ].join('\n'),
  inputSchema,
  kind: 'read',
  summarize: (input) => (input.path ? `${input.pattern} in ${input.path}` : input.pattern),
  paths: (input, ctx) => [resolveToolPath(ctx, input.path ?? '.')],
  async execute(input, ctx) {
    const searchRoot = resolveToolPath(ctx, input.path ?? '.')
    const { base, rest } = splitStaticPrefix(input.pattern)
    const root = path.resolve(searchRoot, base)
    const rootStat = await fs.stat(root).catch(() => undefined)
    if (!rootStat) return 'No files found'
    if (!rootStat.isDirectory()) return rest === '' ? root : 'No files found'
    if (!hasGlobChars(rest)) {
      const file = path.join(root, rest)
      return (await fs.stat(file).catch(() => undefined))?.isFile() ? file : 'No files found'
    }
    const matcher = globToRegExp(rest)
    const walk = await walkFiles(root, { signal: ctx.signal, accept: (rel) => matcher.test(rel) })
    if (walk.files.length === 0) return walk.truncated ? 'No files found (the search stopped early: too many files)' : 'No files found'
    const withTimes = await Promise.all(
      walk.files.map(async (f) => ({ abs: f.abs, mtime: (await fs.stat(f.abs).catch(() => undefined))?.mtimeMs ?? 0 })),
    )
    // Newest first, like Claude Code; equal times by path, so the order is stable.
    withTimes.sort((a, b) => b.mtime - a.mtime || (a.abs < b.abs ? -1 : a.abs > b.abs ? 1 : 0))
    const shown = withTimes.slice(0, MAX_GLOB_RESULTS).map((f) => f.abs)
    if (withTimes.length > MAX_GLOB_RESULTS) {
      shown.push(`(${withTimes.length - MAX_GLOB_RESULTS} more matches not shown; use a more specific pattern or path)`)
    }
    if (walk.truncated) shown.push('(the search stopped early: too many files; use a more specific path)')
    return shown.join('\n')
  },
})
