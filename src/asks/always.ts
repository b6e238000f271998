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
import { atomicWriteJson, moveAside, OWN_FILE, readJsonFile } from '../util/fs.js'
import type { LeadRecordCheck, LeadRecordSeal } from './store.js'
import { withFileLock } from '../util/lock.js'
import { readTeam } from '../teams/team-store.js'
import type { Env } from '../home/env.js'

const AlwaysRules = z.strictObject({
  allow: z.array(z.string()),
  deny: z.array(z.string()).optional(),
  ask: z.array(z.string()).optional(),
  /** team-lead's seal over the rules and their owner (trust/record-seal): a file a teammate wrote does not verify. */
  leadSeal: z.string().optional(),
})
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

/**
 * How a team's "always" files are sealed: the lead writes them with `seal` (and checks what it
 * merges into); a member checks what it reads with `check` and writes nothing (the lead kept the
 * rules already). Neither: the team seals nothing (a Claude Code lead's), as before.
 */
export interface AlwaysSealing {
  seal?: LeadRecordSeal
  check?: LeadRecordCheck
  /** Told about a file that failed the check (kept aside, never deleted). */
  onRefused?: (file: string, keptAs: string | undefined) => void
}

/**
 * The rules in force for `member`: its own (source `session`) and the team's (source `team`). With
 * `sealing.check`, a file not sealed by team-lead for that owner gives no rule and is kept aside.
 */
export async function alwaysRules(team: string, member: string, env?: Env, sealing: AlwaysSealing = {}): Promise<PermissionRule[]> {
  const [own, shared] = await Promise.all([readChecked({ team, member }, env, sealing), readChecked({ team }, env, sealing)])
  return [...parsed(shared, 'team'), ...parsed(own, 'session')]
}

/**
 * Keeps the rules an "always" answer carried (permission updates or rule strings) for `owner`;
 * returns them as written. A rule already kept is not written twice. With `sealing.seal` (the
 * lead) the file is sealed, and one that fails `sealing.check` is kept aside and started afresh;
 * with only `sealing.check` (a member of a sealing team) nothing is written: the lead keeps them.
 */
export async function rememberAlways(
  owner: AlwaysOwner,
  updates: readonly unknown[] | undefined,
  env?: Env,
  sealing: AlwaysSealing = {},
): Promise<string[]> {
  const given = rulesFromUpdates(updates)
  if (!given.length) return []
  if (sealing.check && !sealing.seal) return given.map((u) => formatRuleValue(u.rule))
  const file = alwaysRulesPath(owner, env)
  await withFileLock(file, async () => {
    const { leadSeal: _old, ...kept }: AlwaysRules = (await readChecked(owner, env, sealing)) ?? { allow: [] }
    let changed = sealing.seal !== undefined && _old === undefined
    for (const u of given) {
      const raw = formatRuleValue(u.rule)
      const list = kept[u.behavior] ?? []
      if (!list.includes(raw)) {
        kept[u.behavior] = [...list, raw]
        changed = true
      }
    }
    if (changed) await atomicWriteJson(file, sealing.seal ? { ...kept, leadSeal: sealing.seal('always', sealedBody(owner, kept)) } : kept)
  })
  return given.map((u) => formatRuleValue(u.rule))
}

/** What an "always" seal covers: the rules and whose they are (a file copied to another member does not verify). */
function sealedBody(owner: AlwaysOwner, rules: Omit<AlwaysRules, 'leadSeal'> & { leadSeal?: string }): Record<string, unknown> {
  return { ...rules, owner: owner.member ?? '*' }
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
export async function alwaysAllowed(
  team: string,
  name: string,
  command: string,
  cwd: string,
  env?: Env,
  sealing: AlwaysSealing = {},
): Promise<string | undefined> {
  const rules = await alwaysRules(team, name, env, sealing)
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

/** An owner's file, when it passes `sealing.check` (else kept aside: undefined). */
async function readChecked(owner: AlwaysOwner, env: Env | undefined, sealing: AlwaysSealing): Promise<AlwaysRules | undefined> {
  const file = alwaysRulesPath(owner, env)
  const kept = await readJsonFile(file, AlwaysRules, OWN_FILE)
  if (!kept || !sealing.check) return kept
  if (await sealing.check('always', { ...sealedBody(owner, kept), leadSeal: kept.leadSeal })) return kept
  const aside = await moveAside(file).catch(() => undefined)
  sealing.onRefused?.(file, aside)
  return undefined
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
