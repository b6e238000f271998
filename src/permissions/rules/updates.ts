import path from 'node:path'
import { formatRule, parseRule, ruleFromValue, ruleToValue, type RuleValue } from './rules.js'
import type { PermissionRule, RuleBehavior, RuleSource } from './types.js'

/**
 * Claude Code's permission updates, as carried by `permission_suggestions`,
 * `permission_response.response.permission_updates` and `team_permission_update`:
 * `{ type: 'addRules', rules: [{toolName, ruleContent?}], behavior, destination }`.
 * swarm also accepts a bare rule string (`"Bash(npm test:*)"`) in those lists.
 */
export interface RuleUpdate {
  behavior: RuleBehavior
  rule: RuleValue
}

/** The rules an update list adds; anything that is not an `addRules` update or a rule string is skipped. */
export function rulesFromUpdates(updates: readonly unknown[] | undefined): RuleUpdate[] {
  const out: RuleUpdate[] = []
  for (const u of updates ?? []) {
    if (typeof u === 'string') {
      try {
        out.push({ behavior: 'allow', rule: ruleToValue(parseRule(u, 'allow')) })
      } catch {
        // A malformed suggestion is not a rule; skipping it loses nothing the human agreed to.
      }
      continue
    }
    if (!isRecord(u) || u.type !== 'addRules' || !Array.isArray(u.rules)) continue
    const behavior: RuleBehavior = u.behavior === 'deny' || u.behavior === 'ask' ? u.behavior : 'allow'
    for (const r of u.rules) {
      if (isRecord(r) && typeof r.toolName === 'string') {
        out.push({ behavior, rule: { toolName: r.toolName, ...(typeof r.ruleContent === 'string' ? { ruleContent: r.ruleContent } : {}) } })
      }
    }
  }
  return out
}

/** Parsed rules for the updates; unparsable ones are dropped. */
export function toPermissionRules(updates: readonly RuleUpdate[], source: RuleSource, baseDir?: string): PermissionRule[] {
  return updates.flatMap((u) => {
    try {
      return [ruleFromValue(u.rule, u.behavior, { source, ...(baseDir ? { baseDir } : {}) })]
    } catch {
      return []
    }
  })
}

/** `Bash(npm test:*)` */
export function formatRuleValue(r: RuleValue): string {
  return formatRule({ toolName: r.toolName, content: r.ruleContent })
}

/** The rule strings of a suggestion list, for display. */
export function suggestionStrings(suggestions: readonly unknown[] | undefined): string[] {
  return rulesFromUpdates(suggestions).map((u) => formatRuleValue(u.rule))
}

/**
 * The directory a path rule covers, absolute: `src/**` → `<cwd>/src`, `~/x/**` → `<home>/x`,
 * `//abs/**` → `/abs`. Undefined for rules that are not `dir/**` path rules of Edit or Read.
 */
export function ruleDirectory(rule: RuleValue, cwd: string, home: string): string | undefined {
  if (rule.toolName !== 'Edit' && rule.toolName !== 'Read') return undefined
  const content = rule.ruleContent
  if (content === undefined || !content.endsWith('/**')) return undefined
  const dir = content.slice(0, -3)
  if (/[*?[\\]/.test(dir)) return undefined
  if (dir.startsWith('//')) return path.resolve('/', dir.slice(2))
  if (dir === '~' || dir.startsWith('~/')) return path.join(home, dir.slice(1))
  if (dir.startsWith('/')) return path.resolve(cwd, dir.slice(1))
  return path.resolve(cwd, dir)
}

/** The allow rule a `teamAllowedPaths` entry stands for: `Edit(//abs/dir/**)`. */
export function teamPathRule(entry: { path: string; toolName: string }): RuleValue {
  const abs = path.resolve(entry.path)
  return { toolName: entry.toolName, ruleContent: `/${abs === '/' ? '' : abs}/**` }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
