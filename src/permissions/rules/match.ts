import { isExactBashContent, matchesBashContent, parseCommand, type SimpleCommand } from './bash.js'
import { compilePathPattern, matchesPathPattern } from './path-pattern.js'
import { bashCommand, toolFamily } from './tools.js'
import type { PermissionRule } from './types.js'

/**
 * Rule matching for one tool call. `deny` and `ask` rules match when *any* form of the call
 * matches (a path as written or resolved, any part of a compound command); `allow` rules only
 * when *every* form does, so neither a symlink nor `&& rm -rf ~` rides along on an allow rule.
 */
export interface CallView {
  toolName: string
  input: Record<string, unknown>
  cwd: string
  home: string
  /** Per target path, its absolute candidates (lexical, physical, ~-expanded). */
  targets: string[][]
}

/** Does the rule's tool name cover this tool? `Edit` covers all file editors, `Read` all readers. */
export function ruleCoversTool(rule: PermissionRule, toolName: string): boolean {
  if (rule.toolName === toolName) return true
  const family = toolFamily(toolName)
  if (rule.toolName === 'Edit' && family === 'edit') return true
  if (rule.toolName === 'Read' && family === 'read') return true
  // Reading is part of editing: a file denied to Read is denied to Edit as well.
  if (rule.toolName === 'Read' && family === 'edit' && rule.behavior === 'deny') return true
  // `mcp__server` and `mcp__server__*` cover every tool of that MCP server.
  const server = /^(mcp__[^_]+(?:_[^_]+)*)(?:__\*)?$/.exec(rule.toolName)?.[1]
  return server !== undefined && toolName.startsWith(server + '__')
}

/** Matching for every tool but Bash (which needs per-part decisions; see bashRuleDecision). */
export function ruleMatchesCall(rule: PermissionRule, call: CallView): boolean {
  if (!ruleCoversTool(rule, call.toolName)) return false
  if (rule.content === undefined) return true
  const family = toolFamily(call.toolName)
  if (family === 'edit' || family === 'read') {
    if (call.targets.length === 0) return false
    const pattern = compilePathPattern(rule.content, { cwd: call.cwd, home: call.home, baseDir: rule.baseDir })
    const forms = call.targets.flat()
    return rule.behavior === 'allow' ? forms.every((p) => matchesPathPattern(pattern, p)) : forms.some((p) => matchesPathPattern(pattern, p))
  }
  if (family === 'webfetch') return matchesDomain(rule.content, call.input.url)
  // Content rules for tools without a matcher never match: they cannot be checked.
  return false
}

function matchesDomain(content: string, url: unknown): boolean {
  if (!content.startsWith('domain:') || typeof url !== 'string') return false
  const domain = content.slice('domain:'.length).toLowerCase()
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return false
  }
  return host === domain || host.endsWith('.' + domain)
}

export interface BashRuleOutcome {
  behavior: 'allow' | 'deny' | 'ask'
  rule: PermissionRule
  /** The simple command that decided, for the reason line. */
  part?: string
}

/**
 * Deny: a deny rule matching the whole command, any part, or any command inside a substitution.
 * Then per part, the last matching allow/ask rule: any part asked → ask; every part allowed →
 * allow; otherwise undefined (the mode decides). An exact rule equal to the whole command line
 * decides for all of it. Prefix and wildcard rules never allow a part that holds a command
 * substitution or writes to a file through a redirection; an exact rule or a whole-tool rule may.
 */
export function bashRuleDecision(rules: readonly PermissionRule[], input: Record<string, unknown>): BashRuleOutcome | undefined {
  const bashRules = rules.filter((r) => r.toolName === 'Bash')
  if (bashRules.length === 0) return undefined
  const command = bashCommand(input)?.trim()
  if (command === undefined) {
    const whole = bashRules.find((r) => r.behavior === 'deny' && r.content === undefined)
    return whole ? { behavior: 'deny', rule: whole } : undefined
  }
  const parsed = parseCommand(command)
  const everything = [...parsed.parts, ...parsed.nested]

  for (const rule of bashRules) {
    if (rule.behavior !== 'deny') continue
    if (rule.content === undefined) return { behavior: 'deny', rule }
    const content = rule.content
    if (content === command) return { behavior: 'deny', rule, part: command }
    const hit = everything.find((p) => denyForms(p).some((form) => matchesBashContent(content, form)))
    if (hit) return { behavior: 'deny', rule, part: hit.text }
  }

  const asked = lastMatch(bashRules, (r) => r.content !== undefined && isExactBashContent(r.content) && r.content === command)
  if (asked) return { behavior: asked.behavior as 'allow' | 'ask', rule: asked, part: command }

  for (const nestedPart of parsed.nested) {
    const rule = bashRules.find(
      (r) => r.behavior === 'ask' && (r.content === undefined || denyForms(nestedPart).some((f) => matchesBashContent(r.content!, f))),
    )
    if (rule) return { behavior: 'ask', rule, part: nestedPart.text }
  }

  let allAllowed: BashRuleOutcome | undefined
  let unmatched = parsed.parts.length === 0
  for (const part of parsed.parts) {
    const rule = lastMatch(bashRules, (r) => partMatches(r, part))
    if (rule?.behavior === 'ask') return { behavior: 'ask', rule, part: part.text }
    if (!rule) unmatched = true
    else allAllowed ??= { behavior: 'allow', rule, part: part.text }
  }
  return unmatched ? undefined : allAllowed
}

function partMatches(rule: PermissionRule, part: SimpleCommand): boolean {
  if (rule.behavior === 'deny') return false
  if (rule.content === undefined) return true
  const content = rule.content
  if (rule.behavior === 'ask') return denyForms(part).some((f) => matchesBashContent(content, f))
  if (part.hasSubstitution || part.writesTo.length > 0) return isExactBashContent(content) && part.text === content
  return matchesBashContent(content, part.text)
}

function lastMatch(rules: readonly PermissionRule[], pred: (r: PermissionRule) => boolean): PermissionRule | undefined {
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]
    if ((r.behavior === 'allow' || r.behavior === 'ask') && pred(r)) return r
  }
  return undefined
}

const WRAPPERS = new Set(['sudo', 'command', 'exec', 'nohup', 'time', 'env', 'nice', 'builtin', '!', '{'])

/**
 * The forms a deny or ask rule is tested against: as written, unquoted, and with leading
 * `VAR=value` assignments and wrappers (`sudo`, `env`, `nohup`…) removed, so `'rm' -rf` and
 * `FOO=1 sudo rm -rf` still hit `Bash(rm:*)`.
 */
function denyForms(part: SimpleCommand): string[] {
  const words = part.plain.split(' ')
  let i = 0
  while (
    i < words.length - 1 &&
    (WRAPPERS.has(words[i]) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]) || (words[i].startsWith('-') && i > 0 && WRAPPERS.has(words[i - 1])))
  )
    i += 1
  const stripped = words.slice(i).join(' ').replace(/\s*}$/, '')
  return [...new Set([part.text, part.plain, stripped])]
}
