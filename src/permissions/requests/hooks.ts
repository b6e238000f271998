import { MissingSandboxError, runCommand, SandboxUnavailableError } from '../../agent/tools/command-runner.js'
import type { BashSandbox } from '../../sandbox/types.js'
import { type SettingsPin, hookDrift } from '../rules/settings-pin.js'
import type { PermissionHook } from '../rules/types.js'

/**
 * PermissionRequest hooks: project code, so run as the member's Bash is — through its sandbox,
 * with a minimal environment (no provider keys, no swarm secrets) — and only as pinned when the
 * member started: a hook whose command or named files changed is not run, team-lead is asked.
 */

/** A hook that has not answered after this long is killed (its whole process group). */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000
const MAX_OUTPUT_CHARS = 1024 * 1024

/**
 * What a PermissionRequest hook receives on stdin: Claude Code's fields (`hook_event_name`,
 * `tool_name`, `tool_input`, `permission_mode`, `cwd`, …) plus swarm's (team, agent, request id).
 */
export interface PermissionHookInput {
  hook_event_name: 'PermissionRequest'
  tool_name: string
  tool_input: Record<string, unknown>
  tool_use_id?: string
  cwd: string
  permission_mode: string
  session_id?: string
  permission_suggestions?: unknown[]
  team?: string
  agent?: string
  agent_id?: string
  request_id?: string
  description?: string
  [key: string]: unknown
}

/** A hook's answer. `ask` also stands for "no decision": the request goes on to the leader. */
export interface HookDecision {
  behavior: 'allow' | 'deny' | 'ask'
  message?: string
  updatedInput?: Record<string, unknown>
  /** The hook that decided (allow or deny). */
  hook?: PermissionHook
  /** Why a hook's answer was not used: failure, timeout, garbage. One line each. */
  diagnostics: string[]
}

export interface RunHookOptions {
  cwd: string
  /** The member's environment; the hook gets only the HOOK_ENV part of it. */
  env?: NodeJS.ProcessEnv
  signal?: AbortSignal
  /** The member's Bash sandbox: the hook runs in it (required: a hook never runs outside it). */
  sandbox: BashSandbox
  /** The settings pinned when the member started: a hook that differs from it is not run. */
  pin: SettingsPin
}

/** What a hook keeps of the member's environment; everything else (API keys, SWARM_*, tokens) is dropped. */
export const HOOK_ENV: readonly string[] = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR']

/** The hook's environment: HOOK_ENV and LC_* from `env`, and CLAUDE_PROJECT_DIR (the runner adds the sandbox's). */
export function hookEnv(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const kept = Object.entries(env).filter(([k, v]) => v !== undefined && (HOOK_ENV.includes(k) || k.startsWith('LC_')))
  return { ...Object.fromEntries(kept), CLAUDE_PROJECT_DIR: cwd }
}

/**
 * The hooks whose matcher covers `toolName`. A matcher is a regular expression over the whole
 * tool name (`Bash`, `Edit|Write`, `mcp__.*`); absent, '' and '*' match every tool. A matcher
 * that is not a valid expression is compared literally.
 */
export function hooksFor(hooks: readonly PermissionHook[], toolName: string): PermissionHook[] {
  return hooks.filter((h) => {
    const m = h.matcher
    if (m === undefined || m === '' || m === '*') return true
    try {
      return new RegExp(`^(?:${m})$`).test(toolName)
    } catch {
      return m === toolName
    }
  })
}

/**
 * Runs every hook that matches the tool, in parallel, and combines their answers: any deny wins,
 * then any allow, else ask. With no matching hook the answer is ask with no diagnostics.
 */
export async function runPermissionRequestHooks(
  hooks: readonly PermissionHook[],
  input: PermissionHookInput,
  options: RunHookOptions,
): Promise<HookDecision> {
  const matching = hooksFor(hooks, input.tool_name)
  // One changed hook and none runs: its answer could be the one that decides.
  const drift = matching.map((h) => hookDrift(options.pin, h)).filter((d): d is string => d !== undefined)
  if (drift.length) return { behavior: 'ask', diagnostics: drift.map((d) => `PermissionRequest ${d}: not run; asking team-lead instead`) }
  const answers = await Promise.all(matching.map((h) => runPermissionHook(h, input, options)))
  const diagnostics = answers.flatMap((a) => a.diagnostics)
  const decided = answers.find((a) => a.behavior === 'deny') ?? answers.find((a) => a.behavior === 'allow')
  return decided ? { ...decided, diagnostics } : { behavior: 'ask', diagnostics }
}

/**
 * Runs one hook: `bash -c <command>` through the one command runner Bash uses
 * (`agent/tools/command-runner.ts`), in the member's sandbox and its own process group, the
 * request as JSON on stdin. Where the sandbox is on but bwrap cannot run here it is not run (as
 * each Bash call is then asked, the request goes to team-lead); with the sandbox turned off in the
 * settings it runs as Bash does, plain `bash -c`.
 * The answer is stdout JSON — `{behavior, message?, updatedInput?}` or Claude Code's
 * `{hookSpecificOutput: {decision: {behavior, message?, updatedInput?}}}` — or the exit code:
 * 0 with no output = no decision (ask), 2 = deny with stderr as the message. Any other exit,
 * a timeout (the group is killed), an abort or unparsable output falls back to ask, with a
 * diagnostic. Throws only MissingSandboxError (no sandbox value given), before anything runs.
 */
export async function runPermissionHook(hook: PermissionHook, input: PermissionHookInput, options: RunHookOptions): Promise<HookDecision> {
  if (!options.sandbox || typeof options.sandbox.launch !== 'function') throw new MissingSandboxError()
  const label = `PermissionRequest hook ${JSON.stringify(hook.command)} (${hook.file})`
  const drift = hookDrift(options.pin, hook)
  if (drift) return { behavior: 'ask', diagnostics: [`PermissionRequest ${drift}: not run; asking team-lead instead`] }
  const timeoutMs = hook.timeout !== undefined ? hook.timeout * 1000 : DEFAULT_HOOK_TIMEOUT_MS
  let r: Awaited<ReturnType<typeof runCommand>>
  try {
    r = await runCommand(options.sandbox, hook.command, {
      cwd: options.cwd,
      env: hookEnv(options.env ?? process.env, options.cwd),
      input: JSON.stringify(input),
      separateStreams: true,
      refuseUnconfined: true,
      signal: options.signal ?? new AbortController().signal,
      timeoutMs,
      maxOutputChars: MAX_OUTPUT_CHARS,
    })
  } catch (err) {
    if (err instanceof MissingSandboxError) throw err
    const why =
      err instanceof SandboxUnavailableError ? `${err.message}; asking team-lead instead` : `could not start: ${errText(err)}; asking instead`
    return { behavior: 'ask', diagnostics: [`${label}: ${why}`] }
  }
  const decision: HookDecision = r.timedOut
    ? { behavior: 'ask', diagnostics: [`${label}: no answer within ${timeoutMs} ms, killed; asking instead`] }
    : r.aborted
      ? { behavior: 'ask', diagnostics: [`${label}: aborted; asking instead`] }
      : interpret(r.exitCode, r.signal, r.stdout ?? '', r.stderr ?? '', label)
  if (r.blocked.length) decision.diagnostics.push(`${label} created protected paths, moved aside: ${r.blocked.join(', ')}`)
  return decision.behavior === 'ask' ? decision : { ...decision, hook }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function interpret(code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, label: string): HookDecision {
  const errText = oneLine(stderr)
  if (code === 2) return { behavior: 'deny', message: errText || 'denied by a PermissionRequest hook', diagnostics: [] }
  if (code !== 0) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`
    return { behavior: 'ask', diagnostics: [`${label} ${how}${errText ? `: ${errText}` : ''}; asking instead`] }
  }
  const out = stdout.trim()
  if (out === '') return { behavior: 'ask', diagnostics: [] }
  let raw: unknown
  try {
    raw = JSON.parse(out)
  } catch {
    return { behavior: 'ask', diagnostics: [`${label} printed something that is not JSON (${oneLine(out).slice(0, 80)}); asking instead`] }
  }
  const answer = readAnswer(raw)
  if (typeof answer === 'string') return { behavior: 'ask', diagnostics: [`${label}: ${answer}; asking instead`] }
  return { ...answer, diagnostics: [] }
}

/** Accepts `{behavior…}`, `{hookSpecificOutput: {decision: {behavior…}}}`, `{decision: {behavior…}}` and `{decision: 'approve'|'block', reason}`. */
function readAnswer(raw: unknown): Omit<HookDecision, 'diagnostics'> | string {
  if (!isRecord(raw)) return 'its answer is not a JSON object'
  const specific = isRecord(raw.hookSpecificOutput) ? raw.hookSpecificOutput.decision : undefined
  const d = isRecord(specific) ? specific : isRecord(raw.decision) ? raw.decision : raw
  if (d === raw && typeof raw.decision === 'string') {
    if (raw.decision === 'approve') return { behavior: 'allow', message: str(raw.reason) }
    if (raw.decision === 'block') return { behavior: 'deny', message: str(raw.reason) ?? 'blocked by a PermissionRequest hook' }
    return `unknown decision ${JSON.stringify(raw.decision)}`
  }
  if (d.behavior === undefined && d === raw) return { behavior: 'ask' }
  if (d.behavior !== 'allow' && d.behavior !== 'deny' && d.behavior !== 'ask') return `unknown behavior ${JSON.stringify(d.behavior)}`
  if (d.updatedInput !== undefined && !isRecord(d.updatedInput)) return 'updatedInput is not an object'
  return {
    behavior: d.behavior,
    ...(str(d.message) !== undefined && { message: str(d.message) }),
    ...(isRecord(d.updatedInput) && { updatedInput: d.updatedInput }),
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}
function oneLine(s: string): string {
  return s.trim().replace(/\s*\n\s*/g, ' | ')
}
