import type { PermissionRule, RuleBehavior, RuleSource } from './types.js'

/** A rule that cannot be parsed; callers turn it into a CorruptFileError or UsageError. */
export class RuleSyntaxError extends Error {
  constructor(
    readonly rule: string,
    detail: string,
  ) {
    super(`invalid permission rule ${JSON.stringify(rule)}: ${detail}`)
    this.name = 'RuleSyntaxError'
  }
}

const TOOL_NAME_RE = /^[A-Za-z0-9_*-]+$/

export interface ParseRuleOptions {
  source?: RuleSource
  baseDir?: string
}

/**
 * Parses `Tool` or `Tool(content)` as Claude Code writes rules. `Tool()` and `Tool(*)` mean the
 * whole tool. Parentheses inside content may be escaped as `\(` `\)`; the content runs to the
 * last `)`, so `Bash(echo (hi))` also parses.
 */
export function parseRule(raw: string, behavior: RuleBehavior, options: ParseRuleOptions = {}): PermissionRule {
  if (typeof raw !== 'string') throw new RuleSyntaxError(String(raw), 'a rule is a string')
  const text = raw.trim()
  if (text === '') throw new RuleSyntaxError(raw, 'it is empty')
  const open = text.indexOf('(')
  const toolName = open === -1 ? text : text.slice(0, open)
  if (!TOOL_NAME_RE.test(toolName)) {
    throw new RuleSyntaxError(raw, `tool name ${JSON.stringify(toolName)} has characters other than A-Z a-z 0-9 _ -`)
  }
  const rule: PermissionRule = { behavior, toolName, raw: text, ...options }
  if (open === -1) return rule
  if (!text.endsWith(')')) throw new RuleSyntaxError(raw, 'missing the closing parenthesis')
  const content = unescapeContent(text.slice(open + 1, -1)).trim()
  if (content === '' || content === '*') return rule
  return { ...rule, content }
}

/** The inverse of parseRule: `Bash(npm test:*)`. */
export function formatRule(rule: Pick<PermissionRule, 'toolName' | 'content'>): string {
  return rule.content === undefined ? rule.toolName : `${rule.toolName}(${escapeContent(rule.content)})`
}

/**
 * Claude Code's structured form of a rule, as carried by `permission_suggestions` and
 * `team_permission_update`: `{ toolName, ruleContent? }`.
 */
export interface RuleValue {
  toolName: string
  ruleContent?: string
}

export function ruleToValue(rule: Pick<PermissionRule, 'toolName' | 'content'>): RuleValue {
  return rule.content === undefined ? { toolName: rule.toolName } : { toolName: rule.toolName, ruleContent: rule.content }
}

export function ruleFromValue(value: RuleValue, behavior: RuleBehavior, options: ParseRuleOptions = {}): PermissionRule {
  return parseRule(formatRule({ toolName: value.toolName, content: value.ruleContent }), behavior, options)
}

function unescapeContent(s: string): string {
  return s.replace(/\\([()\\])/g, '$1')
}

function escapeContent(s: string): string {
  // Only parentheses that would unbalance the rule need escaping; escape all to stay simple.
  return s.replace(/\\/g, '\\\\').replace(/([()])/g, '\\$1')
}
