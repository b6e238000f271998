import type { ChildProcess } from 'node:child_process'
import { launchProcess } from '../../process/launch.js'
import { KILL_GRACE_MS, killGroup as signalGroup } from '../../process/signals.js'
import type { BashSandbox, SandboxLaunch } from '../../sandbox/types.js'
import { type SettingsPin, hookDrift } from '../rules/settings-pin.js'
import type { PermissionHook } from '../rules/types.js'

/**
 * PermissionRequest hooks: project code, so run as the member's Bash is — through its sandbox,
 * with a minimal environment (no provider keys, no swarm secrets) — and only as pinned when the
 * member started: a hook whose command or named files changed is not run, team-lead is asked.
 */

/** A hook that has not answered after this long is killed (its whole process group). */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000
const MAX_OUTPUT_BYTES = 1024 * 1024

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

/** The hook's environment: HOOK_ENV and LC_* from `env`, the sandbox's additions, CLAUDE_PROJECT_DIR. */
export function hookEnv(env: NodeJS.ProcessEnv, cwd: string, launch?: Pick<SandboxLaunch, 'env'>): NodeJS.ProcessEnv {
  const kept = Object.entries(env).filter(([k, v]) => v !== undefined && (HOOK_ENV.includes(k) || k.startsWith('LC_')))
  return { ...Object.fromEntries(kept), ...launch?.env, CLAUDE_PROJECT_DIR: cwd }
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

const running = new Set<ChildProcess>()

/** Kills the process group of every hook still running (for the owner's exit handler). */
export function killRunningHooks(): void {
  for (const child of running) killGroup(child, 'SIGKILL')
}

/**
 * Runs one hook: `bash -c <command>` in the member's sandbox (its `bash -c` when the sandbox is off
 * or cannot run here) in its own process group, the request as JSON on stdin.
 * The answer is stdout JSON — `{behavior, message?, updatedInput?}` or Claude Code's
 * `{hookSpecificOutput: {decision: {behavior, message?, updatedInput?}}}` — or the exit code:
 * 0 with no output = no decision (ask), 2 = deny with stderr as the message. Any other exit,
 * a timeout (the group is killed), an abort or unparsable output falls back to ask, with a
 * diagnostic. Never throws.
 */
export async function runPermissionHook(hook: PermissionHook, input: PermissionHookInput, options: RunHookOptions): Promise<HookDecision> {
  const label = `PermissionRequest hook ${JSON.stringify(hook.command)} (${hook.file})`
  const drift = hookDrift(options.pin, hook)
  if (drift) return { behavior: 'ask', diagnostics: [`PermissionRequest ${drift}: not run; asking team-lead instead`] }
  let launch: SandboxLaunch
  try {
    launch = await options.sandbox.launch(hook.command, options.cwd)
  } catch (err) {
    return {
      behavior: 'ask',
      diagnostics: [`${label}: could not be sandboxed (${err instanceof Error ? err.message : String(err)}); asking instead`],
    }
  }
  const decision = await runLaunched(hook, label, launch, input, options)
  try {
    const moved = (await launch.settle?.()) ?? []
    if (moved.length) decision.diagnostics.push(`${label} created protected paths, moved aside: ${moved.join(', ')}`)
  } catch (err) {
    decision.diagnostics.push(`${label}: what it created could not be checked (${err instanceof Error ? err.message : String(err)})`)
  }
  return decision
}

function runLaunched(
  hook: PermissionHook,
  label: string,
  launch: SandboxLaunch,
  input: PermissionHookInput,
  options: RunHookOptions,
): Promise<HookDecision> {
  const timeoutMs = hook.timeout !== undefined ? hook.timeout * 1000 : DEFAULT_HOOK_TIMEOUT_MS
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined
    let failure: string | undefined
    let settled = false
    let killTimer: NodeJS.Timeout | undefined

    // Its own process group, tracked (and reaped on exit) by the process module.
    const { child } = launchProcess(launch.file, launch.args, {
      cwd: options.cwd,
      env: hookEnv(options.env ?? process.env, options.cwd, launch),
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(launch.fd3 && { fd3: launch.fd3 }),
    })
    running.add(child)

    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      clearTimeout(killTimer)
      options.signal?.removeEventListener('abort', onAbort)
      running.delete(child)
      // Reap what the hook left running in its group (background jobs holding no pipe).
      killGroup(child, 'SIGTERM')
      const decision = failure
        ? { behavior: 'ask' as const, diagnostics: [`${label}: ${failure}; asking instead`] }
        : interpret(exited?.code ?? null, exited?.signal ?? null, stdout, stderr, label)
      resolve(decision.behavior === 'ask' ? decision : { ...decision, hook })
    }
    const stop = (why: string) => {
      // After a clean exit, a background job holding stdout open must not turn the answer into a failure.
      if (exited === undefined) failure ??= why
      if (killTimer !== undefined) return
      killGroup(child, 'SIGTERM')
      killTimer = setTimeout(() => {
        killGroup(child, 'SIGKILL')
        finish()
      }, KILL_GRACE_MS)
    }
    const onAbort = () => stop('aborted')
    const timer = setTimeout(() => stop(`no answer within ${timeoutMs} ms, killed`), timeoutMs)
    options.signal?.addEventListener('abort', onAbort, { once: true })
    if (options.signal?.aborted) onAbort()

    child.stdout?.on('data', (d: Buffer) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += d.toString('utf8')
    })
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < MAX_OUTPUT_BYTES) stderr += d.toString('utf8')
    })
    // EPIPE when the hook exits without reading its input; its answer still counts.
    child.stdin?.on('error', () => {})
    child.stdin?.end(JSON.stringify(input))
    child.on('error', (err) => {
      failure ??= `could not start: ${err.message}`
      finish()
    })
    child.on('exit', (code, signal) => {
      exited = { code, signal }
    })
    child.on('close', (code, signal) => {
      exited ??= { code, signal }
      finish()
    })
  })
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined) signalGroup(child.pid, signal)
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
