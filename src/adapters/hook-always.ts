/**
 * swarm's "always" for an agent-CLI teammate's shell command: the request carries its suggested
 * rule (`Bash(npm test:*)`); approved with `--always` (console `a`), that rule is kept for the
 * teammate in `agents/<name>/always-rules.json`, and later shell calls it allows are answered by
 * swarm without asking. The CLI is only ever told "once", so every call still reaches swarm.
 */
import path from 'node:path'
import { z } from 'zod'
import { agentDir } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { evaluatePermission } from '../permissions/rules/evaluate.js'
import { parseRule } from '../permissions/rules/rules.js'
import { permissionSuggestions } from '../permissions/rules/suggest.js'
import { formatRuleValue, rulesFromUpdates } from '../permissions/rules/updates.js'
import { atomicWriteJson, OWN_FILE, readJsonFile } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import { readTeam } from '../teams/team-store.js'

type Env = NodeJS.ProcessEnv

const AlwaysRules = z.strictObject({ allow: z.array(z.string()) })

export function alwaysRulesPath(team: string, name: string, env?: Env): string {
  return path.join(agentDir(team, name, env), 'always-rules.json')
}

/**
 * The command of a call of one of the CLI's shell tools (its adapter's `shellTools`); undefined
 * for any other tool (its "always" is then only "once").
 */
export function shellCommandOf(shellTools: readonly string[], toolName: string, input: Record<string, unknown>): string | undefined {
  return shellTools.includes(toolName) && typeof input.command === 'string' && input.command.trim() !== '' ? input.command : undefined
}

/** Where the teammate's commands run (its member entry's cwd), against which its rules are read. */
export async function memberCwd(team: string, name: string, env?: Env): Promise<string> {
  return (await readTeam(team, env)).members.find((m) => m.name === name)?.cwd ?? process.cwd()
}

/** The `permission_suggestions` of a shell call: what `--always` would allow. */
export function shellSuggestions(command: string, cwd: string): unknown[] {
  return permissionSuggestions('Bash', { command }, { cwd })
}

/**
 * The rule (as written) of an earlier "always" that allows `command`, by swarm's rule engine: a
 * command naming the control plane or permission settings is never allowed this way.
 */
export async function alwaysAllowed(team: string, name: string, command: string, cwd: string, env?: Env): Promise<string | undefined> {
  const kept = await readJsonFile(alwaysRulesPath(team, name, env), AlwaysRules, OWN_FILE)
  if (!kept?.allow.length) return undefined
  const decision = evaluatePermission({
    toolName: 'Bash',
    input: { command },
    kind: 'execute',
    mode: 'default',
    rules: kept.allow.map((raw) => parseRule(raw, 'allow', { source: 'session' })),
    cwd,
    ...controlPlaneOptions(cwd, env),
  })
  return decision.behavior === 'allow' && decision.source === 'rule' ? decision.rule?.raw : undefined
}

/** Keeps the rules an "always" answer carried, for this teammate. */
export async function rememberAlways(team: string, name: string, suggestions: readonly unknown[] | undefined, env?: Env): Promise<void> {
  const rules = rulesFromUpdates(suggestions)
    .filter((u) => u.behavior === 'allow' && u.rule.toolName === 'Bash')
    .map((u) => formatRuleValue(u.rule))
  if (!rules.length) return
  const file = alwaysRulesPath(team, name, env)
  await withFileLock(file, async () => {
    const kept = (await readJsonFile(file, AlwaysRules, OWN_FILE))?.allow ?? []
    await atomicWriteJson(file, { allow: [...new Set([...kept, ...rules])] })
  })
}
