/**
 * The one "always" store, for every member kind: an approval with "always" keeps its rules
 * (`Bash(npm test:*)`) for the member in `agents/<name>/always-rules.json`, a team-wide one for
 * every member in `permissions/always-rules.json`. swarm's agent adds them to the rules it
 * evaluates; an agent CLI's hook lets swarm answer a shell call they cover without asking (the
 * CLI is only ever told "once", so every call still reaches swarm). A command naming the control
 * plane or the permission settings is never allowed this way (evaluatePermission decides).
 */
import path from 'node:path'
import { z } from 'zod'
import { agentDir, permissionsDir } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { evaluatePermission } from '../permissions/rules/evaluate.js'
import { parseRule } from '../permissions/rules/rules.js'
import { permissionSuggestions } from '../permissions/rules/suggest.js'
import type { PermissionRule, RuleBehavior } from '../permissions/rules/types.js'
import { formatRuleValue, rulesFromUpdates } from '../permissions/rules/updates.js'
import { atomicWriteJson, OWN_FILE, readJsonFile } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import { readTeam } from '../teams/team-store.js'
import type { Env } from '../home/env.js'

const AlwaysRules = z.strictObject({ allow: z.array(z.string()), deny: z.array(z.string()).optional(), ask: z.array(z.string()).optional() })
type AlwaysRules = z.infer<typeof AlwaysRules>

/** Whose rules: one member's, or (no member) the whole team's. */
export interface AlwaysOwner {
  team: string
  member?: string
}

/** The file an owner's "always" rules are kept in. */
export function alwaysRulesPath(owner: AlwaysOwner, env?: Env): string {
  return owner.member === undefined
    ? path.join(permissionsDir(owner.team, env), 'always-rules.json')
    : path.join(agentDir(owner.team, owner.member, env), 'always-rules.json')
}

/** The rules in force for `member`: its own (source `session`) and the team's (source `team`). */
export async function alwaysRules(team: string, member: string, env?: Env): Promise<PermissionRule[]> {
  const [own, shared] = await Promise.all([read({ team, member }, env), read({ team }, env)])
  return [...parsed(shared, 'team'), ...parsed(own, 'session')]
}

/**
 * Keeps the rules an "always" answer carried (permission updates or rule strings) for `owner`;
 * returns them as written. A rule already kept is not written twice.
 */
export async function rememberAlways(owner: AlwaysOwner, updates: readonly unknown[] | undefined, env?: Env): Promise<string[]> {
  const given = rulesFromUpdates(updates)
  if (!given.length) return []
  const file = alwaysRulesPath(owner, env)
  await withFileLock(file, async () => {
    const kept: AlwaysRules = (await readJsonFile(file, AlwaysRules, OWN_FILE)) ?? { allow: [] }
    let changed = false
    for (const u of given) {
      const raw = formatRuleValue(u.rule)
      const list = kept[u.behavior] ?? []
      if (!list.includes(raw)) {
        kept[u.behavior] = [...list, raw]
        changed = true
      }
    }
    if (changed) await atomicWriteJson(file, kept)
  })
  return given.map((u) => formatRuleValue(u.rule))
}

/**
 * The command of a call of one of the CLI's shell tools (its adapter's `shellTools`); undefined
 * for any other tool (its "always" is then only "once").
 */
export function shellCommandOf(shellTools: readonly string[], toolName: string, input: Record<string, unknown>): string | undefined {
  return shellTools.includes(toolName) && typeof input.command === 'string' && input.command.trim() !== '' ? input.command : undefined
}

/** Where the member's commands run (its member entry's cwd), against which its rules are read. */
export async function memberCwd(team: string, name: string, env?: Env): Promise<string> {
  return (await readTeam(team, env)).members.find((m) => m.name === name)?.cwd ?? process.cwd()
}

/** The `permission_suggestions` of a shell call: what `--always` would allow. */
export function shellSuggestions(command: string, cwd: string): unknown[] {
  return permissionSuggestions('Bash', { command }, { cwd })
}

/**
 * The rule (as written) of an earlier "always" — the member's or the team's — that allows the
 * shell `command`, by swarm's rule engine: a command naming the control plane or permission
 * settings is never allowed this way, and a kept deny wins.
 */
export async function alwaysAllowed(team: string, name: string, command: string, cwd: string, env?: Env): Promise<string | undefined> {
  const rules = await alwaysRules(team, name, env)
  if (!rules.length) return undefined
  const decision = evaluatePermission({
    toolName: 'Bash',
    input: { command },
    kind: 'execute',
    mode: 'default',
    rules,
    cwd,
    ...controlPlaneOptions(cwd, env),
  })
  return decision.behavior === 'allow' && decision.source === 'rule' ? decision.rule?.raw : undefined
}

function read(owner: AlwaysOwner, env?: Env): Promise<AlwaysRules | undefined> {
  return readJsonFile(alwaysRulesPath(owner, env), AlwaysRules, OWN_FILE)
}

function parsed(kept: AlwaysRules | undefined, source: 'session' | 'team'): PermissionRule[] {
  if (!kept) return []
  const behaviors: RuleBehavior[] = ['allow', 'deny', 'ask']
  return behaviors.flatMap((b) =>
    (kept[b] ?? []).flatMap((raw) => {
      try {
        return [parseRule(raw, b, { source })]
      } catch {
        return [] // a hand-edited rule that does not parse allows nothing: the call is asked as before
      }
    }),
  )
}
