import os from 'node:os'
import path from 'node:path'
import { parseCommand, type SimpleCommand } from './bash.js'
import { isWithin } from './rule-paths.js'
import { formatRule, parseRule, ruleToValue, type RuleValue } from './rules.js'
import { SEARCH_TOOLS, bashCommand, targetPaths, toolFamily } from './tools.js'

/**
 * "Always allow" suggestions for a request, shown beside it and added as a rule when the human
 * approves always: `npm test -- --watch` → `Bash(npm test:*)`, `src/a/b.ts` → `Edit(src/a/**)`.
 * Every suggestion matches the call it was made for.
 */

/** Commands whose second word selects what runs (`git push`, `npm test`). */
const SUBCOMMAND_TOOLS = new Set([
  'apt',
  'apt-get',
  'brew',
  'bun',
  'bundle',
  'cargo',
  'composer',
  'deno',
  'docker',
  'dotnet',
  'gh',
  'git',
  'go',
  'gradle',
  'helm',
  'kubectl',
  'make',
  'mix',
  'mvn',
  'npm',
  'npx',
  'pip',
  'pip3',
  'pnpm',
  'pnpx',
  'poetry',
  'rake',
  'rustup',
  'swift',
  'terraform',
  'uv',
  'yarn',
  'bunx',
])
/** …and whose third word does, after these second words (`npm run build`, `docker compose up`). */
const RUNNERS: Record<string, ReadonlySet<string>> = {
  npm: new Set(['run', 'run-script', 'exec']),
  pnpm: new Set(['run', 'exec']),
  yarn: new Set(['run']),
  bun: new Set(['run']),
  docker: new Set(['compose']),
  uv: new Set(['run']),
  poetry: new Set(['run']),
}
/** Commands too powerful for a prefix rule: only the exact command is suggested. */
const EXACT_ONLY = new Set([
  'bash',
  'sh',
  'zsh',
  'fish',
  'dash',
  'sudo',
  'su',
  'doas',
  'env',
  'eval',
  'exec',
  'xargs',
  'nohup',
  'time',
  'command',
  'builtin',
  'source',
  '.',
  'python',
  'python3',
  'node',
  'perl',
  'ruby',
  'php',
  'rm',
  'dd',
  'chmod',
  'chown',
  'curl',
  'wget',
  'ssh',
  'scp',
  'rsync',
  'find',
  'awk',
  'sed',
  'tee',
  'mv',
  'cp',
  'ln',
  'kill',
  'pkill',
])

export interface SuggestOptions {
  cwd: string
  home?: string
}

/** One rule string for the call (for a compound command, the first part's). */
export function suggestRule(toolName: string, input: Record<string, unknown>, options: SuggestOptions): string {
  return suggestRules(toolName, input, options)[0]
}

/** One rule per distinct simple command for Bash; a single rule for every other tool. */
export function suggestRules(toolName: string, input: Record<string, unknown>, options: SuggestOptions): string[] {
  const home = options.home ?? os.homedir()
  const family = toolFamily(toolName)
  if (family === 'bash') {
    const command = bashCommand(input)?.trim() ?? ''
    const parts = parseCommand(command).parts
    if (parts.length === 0) return ['Bash']
    return [...new Set(parts.map((p) => formatRule({ toolName: 'Bash', content: bashContent(p) })))]
  }
  if (family === 'edit' || family === 'read') {
    const target = targetPaths(toolName, input)[0]
    if (target === undefined) return [toolName]
    const ruleTool = family === 'edit' ? 'Edit' : 'Read'
    const isDir = family === 'read' && SEARCH_TOOLS.has(toolName)
    return [formatRule({ toolName: ruleTool, content: pathContent(path.resolve(options.cwd, target), isDir, options.cwd, home) })]
  }
  if (family === 'webfetch' && typeof input.url === 'string') {
    try {
      return [formatRule({ toolName, content: `domain:${new URL(input.url).hostname}` })]
    } catch {
      return [toolName]
    }
  }
  return [toolName]
}

/**
 * Claude Code's `permission_suggestions` for a `permission_request`:
 * `[{ type: 'addRules', rules: [{toolName, ruleContent}], behavior: 'allow', destination }]`.
 */
export function permissionSuggestions(
  toolName: string,
  input: Record<string, unknown>,
  options: SuggestOptions & { destination?: string },
): Array<{ type: 'addRules'; rules: RuleValue[]; behavior: 'allow'; destination: string }> {
  const rules = suggestRules(toolName, input, options).map((raw) => ruleToValue(parseRule(raw, 'allow')))
  return [{ type: 'addRules', rules, behavior: 'allow', destination: options.destination ?? 'session' }]
}

function bashContent(part: SimpleCommand): string {
  const words = part.text.split(' ')
  const first = words[0]
  if (part.hasSubstitution || part.writesTo.length > 0 || first.includes('=') || EXACT_ONLY.has(path.basename(first)) || /["'\\$`]/.test(first)) {
    return part.text
  }
  let n = 1
  const plainWord = (w: string | undefined) => w !== undefined && /^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/.test(w)
  if (SUBCOMMAND_TOOLS.has(first) && plainWord(words[1])) {
    n = 2
    if (RUNNERS[first]?.has(words[1]) && plainWord(words[2])) n = 3
  }
  return `${words.slice(0, n).join(' ')}:*`
}

function pathContent(abs: string, isDir: boolean, cwd: string, home: string): string {
  const dir = isDir ? abs : path.dirname(abs)
  if (isWithin(abs, cwd)) {
    const rel = path.relative(cwd, dir)
    if (rel === '') return isDir ? './**' : `./${escapeGlob(path.basename(abs))}`
    return `${escapeGlob(rel)}/**`
  }
  if (isWithin(dir, home) && dir !== home) return `~/${escapeGlob(path.relative(home, dir))}/**`
  return dir === '/' ? `//${escapeGlob(path.basename(abs))}` : `/${escapeGlob(dir)}/**`
}

function escapeGlob(s: string): string {
  return s.replace(/[*?[\\]/g, '\\$&')
}
