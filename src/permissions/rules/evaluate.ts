import os from 'node:os'
import path from 'node:path'
import { allDirForms, bashMentionsControlPlane, bashMentionsProtected } from './control-plane.js'
import { bashRuleDecision, ruleMatchesCall, type CallView } from './match.js'
import { configDirPart, protectedPart } from '../../sandbox/protected.js'
import { isWithinAny } from './rule-paths.js'
import { pathCandidates } from './physical-path.js'
import { bashCommand, targetPaths, toolFamily } from './tools.js'
import type { AllowedPath, RuleDecision, PermissionQuery, PermissionRule } from './types.js'

/**
 * Decides a tool call. Order:
 *  1. the control plane: a file tool reading, listing or writing under `<root>/teams` or
 *     `<root>/tasks` (the lead's key included) is denied — in every mode, `bypassPermissions`
 *     included; a search rooted above it runs, and the tool itself skips it (control-plane-guard);
 *     A file tool reading under `sandbox.filesystem.denyRead` is denied the same way;
 *  2. deny rules (any matching form of the call);
 *  3. plan mode: anything but reading, coordination and writing the plan file is denied;
 *  4. forced asks: a Bash command naming the control plane, any Bash call when the sandbox is on
 *     but cannot run, an edit of a settings file; no rule and no mode auto-allows these (`dontAsk`
 *     denies them); an edit of a protected path, unless a user's allow rule names that path;
 *  5. the last matching allow/ask rule;
 *  6. a sandboxed Bash call with `autoAllowBashIfSandboxed`, then the mode.
 * The only I/O is symlink resolution of the paths involved.
 */
export function evaluatePermission(q: PermissionQuery): RuleDecision {
  const home = q.home ?? os.homedir()
  const family = toolFamily(q.toolName)
  const targets = targetPaths(q.toolName, q.input).map((t) => pathCandidates(t, q.cwd, home))
  const call: CallView = { toolName: q.toolName, input: q.input, cwd: q.cwd, home, targets }
  const forms = targets.flat()

  const controlForms = allDirForms(q.controlPlaneDirs)
  if (family === 'edit') {
    const hit = forms.find((p) => isWithinAny(p, controlForms))
    if (hit) return deny(`${q.toolName} may not write into swarm's control plane (${hit})`, 'control-plane')
  }
  if (family === 'read') {
    const hit = forms.find((p) => isWithinAny(p, controlForms))
    if (hit) return deny(`${q.toolName} may not read or list swarm's control plane (${hit})`, 'control-plane')
    const hidden = q.denyRead?.length ? forms.find((p) => isWithinAny(p, allDirForms(q.denyRead!))) : undefined
    if (hidden) return deny(`${q.toolName} may not read ${hidden}: sandbox.filesystem.denyRead hides it`, 'rule')
  }

  const bash = family === 'bash' ? bashRuleDecision(q.rules, q.input) : undefined
  const denied = bash?.behavior === 'deny' ? bash.rule : q.rules.find((r) => r.behavior === 'deny' && family !== 'bash' && ruleMatchesCall(r, call))
  if (denied) return { behavior: 'deny', reason: `denied by rule ${denied.raw}${describeSource(denied)}`, source: 'rule', rule: denied }

  const passes = q.kind === 'read' || q.kind === 'coordination'
  const isPlanFileWrite =
    family === 'edit' &&
    q.planFilePath !== undefined &&
    forms.length > 0 &&
    forms.every((p) => pathCandidates(q.planFilePath!, q.cwd, home).includes(p))
  if (q.mode === 'plan' && !passes && !isPlanFileWrite) {
    return deny(`plan mode: only reading and writing the plan file until the plan is approved (${q.toolName})`, 'mode')
  }

  const forced = forcedAsk(q, family, forms) ?? protectedWrite(q, family, forms, call)
  if (forced) return dontAsk(q, forced)

  const ruled = bash && bash.behavior !== 'deny' ? bash.rule : lastMatchingRule(q.rules, call, family)
  if (ruled) {
    const decision: RuleDecision = {
      behavior: ruled.behavior,
      reason: `${ruled.behavior === 'allow' ? 'allowed' : 'asked'} by rule ${ruled.raw}${describeSource(ruled)}`,
      source: 'rule',
      rule: ruled,
    }
    return dontAsk(q, decision)
  }
  if (family === 'bash' && q.bashSandbox?.status === 'sandboxed' && q.autoAllowSandboxedBash)
    return allow('sandboxed (sandbox.autoAllowBashIfSandboxed)')
  return byMode(q, family, forms, passes)
}

/**
 * A write to a protected path (`.git`, `.vscode`, shell start-up files… see protectedPart) or
 * anywhere under a project's `.claude/` (configDirPart; swarm's state root is not a project's):
 * asked in every mode unless an allow rule of the user's names that path itself
 * (`Edit(.git/config)`); a directory-wide grant such as a teamAllowedPaths entry does not count.
 */
function protectedWrite(q: PermissionQuery, family: string, forms: string[], call: CallView): RuleDecision | undefined {
  if (family !== 'edit') return undefined
  const exempt = q.rootDir ? allDirForms([q.rootDir]) : []
  const hit = forms.map((p) => protectedPart(p) ?? configDirPart(p, exempt)).find((p) => p !== undefined)
  if (!hit) return undefined
  const named = q.rules.some(
    (r) =>
      r.behavior === 'allow' &&
      r.source !== 'team' &&
      r.content !== undefined &&
      (protectedPart(path.posix.join('/', r.content)) ?? configDirPart(path.posix.join('/', r.content))) !== undefined &&
      ruleMatchesCall(r, call),
  )
  if (named) return undefined
  return ask(`${q.toolName} writes a protected path (${hit}); it is asked in every mode`, 'protected-file')
}

function forcedAsk(q: PermissionQuery, family: string, forms: string[]): RuleDecision | undefined {
  if (family === 'bash') {
    const command = bashCommand(q.input) ?? ''
    const cp = bashMentionsControlPlane(command, { controlPlaneDirs: q.controlPlaneDirs, rootDir: q.rootDir, cwd: q.cwd, home: q.home })
    if (cp) return ask(`the command touches swarm's control plane (${cp}); it is never auto-allowed`, 'control-plane')
    if (q.bashSandbox?.status === 'unavailable')
      return ask(`Bash cannot run in the sandbox here (${q.bashSandbox.reason}); every Bash call is asked`, 'sandbox')
    const prot = bashMentionsProtected(command)
    if (prot) return ask(`the command touches permission settings (${prot}); it is never auto-allowed`, 'protected-file')
  }
  if (family === 'edit' && q.protectedPaths?.length) {
    const protectedForms = allDirForms(q.protectedPaths)
    const hit = forms.find((p) => isWithinAny(p, protectedForms))
    if (hit) return ask(`${q.toolName} edits permission settings (${hit}); it is never auto-allowed`, 'protected-file')
  }
  return undefined
}

function lastMatchingRule(rules: readonly PermissionRule[], call: CallView, family: string): PermissionRule | undefined {
  if (family === 'bash') return undefined
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i]
    if (r.behavior !== 'deny' && ruleMatchesCall(r, call)) return r
  }
  return undefined
}

function byMode(q: PermissionQuery, family: string, forms: string[], passes: boolean): RuleDecision {
  switch (q.mode) {
    case 'bypassPermissions':
      return allow('bypassPermissions mode')
    case 'plan':
      return passes ? allow('plan mode: read-only') : allow('plan mode: the plan file')
    default:
      break
  }
  if (passes) return allow(q.kind === 'read' ? 'read-only tool' : 'coordination tool')
  if (q.mode === 'acceptEdits' && family === 'edit' && forms.length > 0) {
    const dirs = allDirForms([q.cwd, ...allowedFor(q.allowedPaths ?? [], q.toolName)])
    if (forms.every((p) => isWithinAny(p, dirs))) return allow('acceptEdits mode: an edit inside the allowed paths')
  }
  const reason =
    q.mode === 'bubble'
      ? 'bubble mode: the parent answers'
      : q.mode === 'acceptEdits'
        ? 'acceptEdits mode asks for anything but edits inside the allowed paths'
        : `${q.mode} mode asks for anything not read-only`
  return dontAsk(q, { behavior: 'ask', reason, source: 'mode' })
}

function allowedFor(paths: readonly AllowedPath[], toolName: string): string[] {
  return paths.flatMap((p) => {
    if (typeof p === 'string') return [p]
    if (p.toolName === undefined || p.toolName === toolName) return [p.path]
    if (p.toolName === 'Edit' && toolFamily(toolName) === 'edit') return [p.path]
    return []
  })
}

/** `dontAsk` turns every ask into a deny. */
function dontAsk(q: PermissionQuery, d: RuleDecision): RuleDecision {
  if (q.mode !== 'dontAsk' || d.behavior !== 'ask') return d
  return { ...d, behavior: 'deny', reason: `dontAsk mode denies what it would ask: ${d.reason}` }
}

function allow(reason: string): RuleDecision {
  return { behavior: 'allow', reason, source: 'mode' }
}
function deny(reason: string, source: RuleDecision['source']): RuleDecision {
  return { behavior: 'deny', reason, source }
}
function ask(reason: string, source: RuleDecision['source']): RuleDecision {
  return { behavior: 'ask', reason, source }
}

function describeSource(rule: PermissionRule): string {
  return rule.source ? ` (from ${rule.source})` : ''
}
