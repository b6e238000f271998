import fs from 'node:fs'
import { BackendUnavailableError } from '../errors.js'
import { runCommand } from '../process/launch.js'
import type { PaneBackend } from './backend.js'
import { findBackend, paneBackends, parseBackendChoice } from './registry.js'
import type { BackendChoice, BackendType } from './types.js'
import type { Env } from '../home/env.js'

/** The answer of one probe (`tmux -V`, `it2 session list`). */
export interface ProbeResult {
  ok: boolean
  /** The version, or why it failed. */
  detail: string
}

/** Everything detection looks at, injected so that each branch can be tested. */
export interface DetectInputs {
  env: Env
  /** Whether stdin and stdout are terminals. */
  isTTY: boolean
  platform: NodeJS.Platform
  /** Contents of /etc/os-release (Linux), for install guidance. */
  osRelease?: string
  /** Runs a backend's probe command (each at most once). */
  probe(backend: PaneBackend): Promise<ProbeResult>
}

export interface Detection {
  backend: BackendType
  /** One sentence: why this backend. */
  reason: string
  /** What was looked at, in order. */
  trace: string[]
}

/** No terminal, or a CI runner (CI set to anything but "" / "0" / "false"). */
export function isInteractive(env: Env, isTTY: boolean): boolean {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== '0' && env.CI.toLowerCase() !== 'false'
  return isTTY && !ci
}

const probeLine = (b: PaneBackend) => b.probe.join(' ')
const hintOf = (b: PaneBackend, inputs: DetectInputs) => b.installHint(inputs.platform, inputs.osRelease)

/**
 * Picks a backend in the order of docs/architecture.md (Backends): inside a pane backend's own
 * terminal → that one (inside tmux → tmux; inside iTerm2 with a working `it2` → iterm2); inside
 * one that does not work → a standalone one that does (iTerm2 without it2 → tmux), else an error
 * naming both fixes; not interactive → in-process; else the first standalone backend installed
 * (tmux); else an error with install guidance. The order is the registry's.
 */
export async function detectBackend(inputs: DetectInputs): Promise<Detection> {
  const { env } = inputs
  const trace: string[] = []
  const failed: Array<{ backend: PaneBackend; detail: string }> = []
  for (const b of paneBackends()) {
    if (!b.inside(env)) {
      trace.push(`not inside ${b.label}`)
      continue
    }
    trace.push(`inside ${b.label}`)
    if (!b.probeWhenInside) return { backend: b.type, reason: `running inside ${b.label}`, trace }
    const r = await inputs.probe(b)
    trace.push(`${probeLine(b)}: ${r.ok ? 'works' : r.detail}`)
    if (r.ok) return { backend: b.type, reason: `inside ${b.label} and \`${probeLine(b)}\` works`, trace }
    failed.push({ backend: b, detail: r.detail })
  }
  const standalone = paneBackends().filter((b) => b.standalone && !failed.some((f) => f.backend === b))
  if (failed.length > 0) {
    const names = failed.map((f) => f.backend.label).join(', ')
    for (const b of standalone) {
      const r = await inputs.probe(b)
      trace.push(`${probeLine(b)}: ${r.detail}`)
      if (r.ok) return { backend: b.type, reason: `inside ${names} without a working ${failed[0].backend.probe[0]}; ${b.label} is installed`, trace }
    }
    throw new BackendUnavailableError(
      `inside ${names}, but ${failed.map((f) => `${f.backend.probe[0]} does not work (${f.detail})`).join(', ')} and ${standalone.map((b) => b.label).join(' / ') || 'no other backend'} is not installed`,
      { hint: [...failed.map((f) => hintOf(f.backend, inputs)), ...standalone.map((b) => `or install ${b.label}: ${hintOf(b, inputs)}`)].join('; ') },
    )
  }
  if (!isInteractive(env, inputs.isTTY)) {
    trace.push(inputs.isTTY ? `CI=${env.CI}: not interactive` : 'no terminal: not interactive')
    return { backend: 'in-process', reason: 'not interactive (no terminal, or CI): teammates run inside the leader', trace }
  }
  trace.push('interactive terminal')
  const misses: string[] = []
  for (const b of standalone) {
    const r = await inputs.probe(b)
    trace.push(`${probeLine(b)}: ${r.detail}`)
    if (r.ok) return { backend: b.type, reason: `${b.label} is installed (${r.detail})`, trace }
    misses.push(`${b.label} is not installed (${r.detail})`)
  }
  throw new BackendUnavailableError(`no terminal backend: ${misses.join('; ')}`, {
    hint: `${standalone.map((b) => `install ${b.label}: ${hintOf(b, inputs)}`).join('; ')}; or use --backend in-process`,
  })
}

/**
 * `--backend`: `auto` detects; an explicit backend is checked and is an error when it cannot
 * work here — never a silent fallback to another one.
 */
export async function resolveBackend(choice: BackendChoice, inputs: DetectInputs): Promise<Detection> {
  if (choice === 'auto') return detectBackend(inputs)
  const trace = [`--backend ${choice}`]
  const backend = findBackend(choice)
  if (!backend) return { backend: parseBackendChoice(choice), reason: 'chosen with --backend', trace }
  if (backend.kind === 'in-process') return { backend: choice, reason: 'chosen with --backend', trace }
  const r = await inputs.probe(backend)
  trace.push(`${probeLine(backend)}: ${r.ok ? 'works' : r.detail}`)
  if (r.ok) return { backend: choice, reason: 'chosen with --backend', trace }
  throw new BackendUnavailableError(`--backend ${choice}, but ${backend.probe[0]} does not work here (${r.detail})`, {
    hint: hintOf(backend, inputs),
  })
}

/** Detects (or checks an explicit `--backend`) against the real machine unless inputs are given. */
export async function selectBackend(choice: BackendChoice, inputs: DetectInputs = systemDetectInputs()): Promise<Detection> {
  return resolveBackend(choice, inputs)
}

/** Reads the real machine: `tmux -V` and `it2 session list` (each run at most once, with a timeout). */
export function systemDetectInputs(env: Env = process.env): DetectInputs {
  return {
    env,
    isTTY: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    platform: process.platform,
    osRelease: process.platform === 'linux' ? readOsRelease() : undefined,
    probe: cachedProbe(env),
  }
}

async function probe(bin: string, args: string[], env: Env): Promise<ProbeResult> {
  try {
    const r = await runCommand(bin, args, { env, timeoutMs: 3_000 })
    if (r.code === 127 && !r.stderr) return { ok: false, detail: `${bin} is not installed` }
    if (r.code !== 0) return { ok: false, detail: firstLine(r.stderr || r.stdout) || `${bin} exited with ${r.code}` }
    return { ok: true, detail: firstLine(r.stdout) || 'ok' }
  } catch (err) {
    return { ok: false, detail: (err as Error).message }
  }
}

function firstLine(s: string): string {
  return s.trim().split('\n')[0]?.trim() ?? ''
}

function readOsRelease(): string {
  try {
    return fs.readFileSync('/etc/os-release', 'utf8')
  } catch {
    return '' // no os-release: the guidance lists every package manager
  }
}

/** Each backend's probe runs at most once per set of inputs. */
function cachedProbe(env: Env): (b: PaneBackend) => Promise<ProbeResult> {
  const seen = new Map<string, Promise<ProbeResult>>()
  return (b) => {
    let p = seen.get(b.type)
    if (!p) {
      p = probe(b.probe[0], b.probe.slice(1), env)
      seen.set(b.type, p)
    }
    return p
  }
}
