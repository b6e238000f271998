/**
 * `{{…}}` placeholders in user-written adapter files (argv, env, config files, hook replies),
 * expanded from one teammate's context. Expansion is single-pass: text that comes from a
 * placeholder (a prompt, a path) is never expanded again, so it cannot inject another one.
 */
import { UsageError } from '../errors.js'
import { rootDir } from '../home/paths.js'
import type { AdapterContext, SwarmHookEvent } from './types.js'
import { SWARM_HOOK_EVENTS } from './types.js'

/** A value a placeholder stands for: text, or a list (which only a whole-string placeholder may be). */
export type TemplateValue = string | string[]
export type TemplateVars = (name: string) => TemplateValue | undefined

const PLACEHOLDER = /\{\{\s*([A-Za-z][\w.-]*(?::[^}\s]+)?)\s*\}\}/g

/**
 * The variables of an adapter context: prompt, configDir, cwd, team, name, agentId, model, mode,
 * swarmHome (swarm's state root), hook:<event> (shell command), hookArgv:<event> (list), mcpArgv
 * (list), mcpCommand, mcpArgs (list), env:<VAR> (the spawner's variable, empty if unset), plus `extra`.
 */
export function contextVars(ctx: AdapterContext, extra: Record<string, TemplateValue> = {}): TemplateVars {
  const plain: Record<string, TemplateValue | undefined> = {
    prompt: ctx.firstPrompt,
    configDir: ctx.configDir,
    cwd: ctx.cwd,
    team: ctx.team,
    name: ctx.name,
    agentId: ctx.agentId,
    model: ctx.model ?? '',
    mode: ctx.mode ?? '',
    swarmHome: rootDir(ctx.env),
    mcpArgv: ctx.mcpArgv,
    mcpCommand: ctx.mcpArgv[0],
    mcpArgs: ctx.mcpArgv.slice(1),
    ...extra,
  }
  return (name) => {
    const [head, arg] = splitOnce(name)
    if (arg === undefined) return plain[head]
    if (head === 'env') return ctx.env[arg] ?? ''
    if (head === 'hook') return ctx.hookCommand(hookEvent(arg))
    if (head === 'hookArgv') return ctx.hookArgv(hookEvent(arg))
    return undefined
  }
}

/** One case of a spec's own variable (`vars:`): its value when each placeholder in `when` has one of the values given; no `when`: always. */
export interface VarCase {
  when?: Readonly<Record<string, string | readonly string[]>>
  value: string | readonly string[]
}

/**
 * A spec's own variables on top of `base`: `{{var:NAME}}` is the value of NAME's first case that
 * holds, expanded from `base` (never from another var, so no definition can refer to itself).
 */
export function withSpecVars(base: TemplateVars, defs: Readonly<Record<string, readonly VarCase[]>>): TemplateVars {
  return (name) => {
    const [head, arg] = splitOnce(name)
    if (head !== 'var' || arg === undefined) return base(name)
    const cases = defs[arg]
    if (!cases) return undefined
    const holds = (c: VarCase) =>
      Object.entries(c.when ?? {}).every(([k, want]) => {
        const v = lookup(k, base)
        return typeof v === 'string' && [want].flat().includes(v)
      })
    const hit = cases.find(holds)
    if (!hit) throw new UsageError(`no case of {{var:${arg}}} holds in an agent adapter`, { hint: 'end its cases with one without `when`' })
    return typeof hit.value === 'string' ? expandString(hit.value, base) : expandArgv(hit.value, base)
  }
}

/** Expands a string; a string that is exactly one list-valued placeholder becomes the list. */
export function expandString(text: string, vars: TemplateVars): TemplateValue {
  const whole = /^\{\{\s*([^}]+?)\s*\}\}$/.exec(text)
  if (whole) {
    const v = lookup(whole[1], vars)
    if (Array.isArray(v)) return v
  }
  return text.replace(PLACEHOLDER, (_, name: string) => {
    const v = lookup(name, vars)
    if (Array.isArray(v)) throw new UsageError(`{{${name}}} is a list and must stand alone in its string`)
    return v
  })
}

/** Expands every string in a JSON-like value; a list-valued placeholder inside an array is spliced in. */
export function expandValue(value: unknown, vars: TemplateVars): unknown {
  if (typeof value === 'string') return expandString(value, vars)
  if (Array.isArray(value)) return value.flatMap((v) => (typeof v === 'string' ? [expandString(v, vars)].flat() : [expandValue(v, vars)]))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [expandText(k, vars), expandValue(v, vars)]))
  }
  return value
}

/** Expands a string that must stay a string. */
export function expandText(text: string, vars: TemplateVars): string {
  const v = expandString(text, vars)
  return Array.isArray(v) ? v.join(' ') : v
}

/** Expands an argv template: list placeholders are spliced in. */
export function expandArgv(argv: readonly string[], vars: TemplateVars): string[] {
  return argv.flatMap((a) => [expandString(a, vars)].flat())
}

function lookup(name: string, vars: TemplateVars): TemplateValue {
  const v = vars(name.trim())
  if (v === undefined)
    throw new UsageError(`unknown placeholder {{${name}}} in an agent adapter`, {
      hint: 'see "User-defined agent adapters" in the README for the placeholders',
    })
  return v
}

function splitOnce(name: string): [string, string | undefined] {
  const i = name.indexOf(':')
  return i < 0 ? [name, undefined] : [name.slice(0, i), name.slice(i + 1)]
}

function hookEvent(name: string): SwarmHookEvent {
  if ((SWARM_HOOK_EVENTS as readonly string[]).includes(name)) return name as SwarmHookEvent
  throw new UsageError(`unknown hook event ${JSON.stringify(name)} in an agent adapter`, { hint: `use one of ${SWARM_HOOK_EVENTS.join(', ')}` })
}

/** POSIX-shell quoting of one argument. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`
}
