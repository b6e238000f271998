import fs from 'node:fs'
import { BackendUnavailableError, UsageError } from '../errors.js'
import { runCommand } from '../process/process.js'
import type { BackendChoice, BackendType } from './types.js'

type Env = NodeJS.ProcessEnv

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
  probeTmux(): Promise<ProbeResult>
  probeIt2(): Promise<ProbeResult>
}

export interface Detection {
  backend: BackendType
  /** One sentence: why this backend. */
  reason: string
  /** What was looked at, in order. */
  trace: string[]
}

const BACKENDS: readonly BackendType[] = ['tmux', 'iterm2', 'in-process']

/** Parses `--backend`. UsageError (exit 2) for anything else. */
export function parseBackendChoice(value: string | undefined): BackendChoice {
  if (value === undefined || value === 'auto') return 'auto'
  if ((BACKENDS as readonly string[]).includes(value)) return value as BackendType
  throw new UsageError(`unknown backend ${JSON.stringify(value)}`, { hint: 'use auto, tmux, iterm2 or in-process' })
}

export function insideTmux(env: Env): boolean {
  return Boolean(env.TMUX)
}

export function insideITerm2(env: Env): boolean {
  return env.TERM_PROGRAM === 'iTerm.app' || Boolean(env.ITERM_SESSION_ID)
}

/** No terminal, or a CI runner (CI set to anything but "" / "0" / "false"). */
export function isInteractive(env: Env, isTTY: boolean): boolean {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== '0' && env.CI.toLowerCase() !== 'false'
  return isTTY && !ci
}

/**
 * Picks a backend in the order of DESIGN §4: inside tmux → tmux; inside iTerm2 with a working
 * `it2` → iterm2; iTerm2 without it2 but with tmux → tmux; iTerm2 with neither → error; not
 * interactive → in-process; else tmux if installed; else error with install guidance.
 */
export async function detectBackend(inputs: DetectInputs): Promise<Detection> {
  const { env } = inputs
  const trace: string[] = []
  if (insideTmux(env)) {
    trace.push('$TMUX is set: running inside tmux')
    return { backend: 'tmux', reason: 'running inside tmux ($TMUX is set)', trace }
  }
  trace.push('$TMUX is not set')
  if (insideITerm2(env)) {
    trace.push(`inside iTerm2 (${env.TERM_PROGRAM === 'iTerm.app' ? 'TERM_PROGRAM=iTerm.app' : 'ITERM_SESSION_ID is set'})`)
    const it2 = await inputs.probeIt2()
    trace.push(`it2 session list: ${it2.ok ? 'works' : it2.detail}`)
    if (it2.ok) return { backend: 'iterm2', reason: 'inside iTerm2 and `it2 session list` works', trace }
    const tmux = await inputs.probeTmux()
    trace.push(`tmux -V: ${tmux.detail}`)
    if (tmux.ok) return { backend: 'tmux', reason: 'inside iTerm2 without a working it2; tmux is installed', trace }
    throw new BackendUnavailableError(`inside iTerm2, but it2 does not work (${it2.detail}) and tmux is not installed`, {
      hint: `${it2InstallHint()}; or install tmux: ${tmuxInstallHint(inputs.platform, inputs.osRelease)}`,
    })
  }
  trace.push('not inside iTerm2')
  if (!isInteractive(env, inputs.isTTY)) {
    trace.push(inputs.isTTY ? `CI=${env.CI}: not interactive` : 'no terminal: not interactive')
    return { backend: 'in-process', reason: 'not interactive (no terminal, or CI): teammates run inside the leader', trace }
  }
  trace.push('interactive terminal')
  const tmux = await inputs.probeTmux()
  trace.push(`tmux -V: ${tmux.detail}`)
  if (tmux.ok) return { backend: 'tmux', reason: `tmux is installed (${tmux.detail})`, trace }
  throw new BackendUnavailableError(`no terminal backend: tmux is not installed (${tmux.detail})`, {
    hint: `install tmux: ${tmuxInstallHint(inputs.platform, inputs.osRelease)}; or use --backend in-process`,
  })
}

/**
 * `--backend`: `auto` detects; an explicit backend is checked and is an error when it cannot
 * work here — never a silent fallback to another one.
 */
export async function resolveBackend(choice: BackendChoice, inputs: DetectInputs): Promise<Detection> {
  if (choice === 'auto') return detectBackend(inputs)
  const trace = [`--backend ${choice}`]
  if (choice === 'in-process') return { backend: choice, reason: 'chosen with --backend', trace }
  if (choice === 'tmux') {
    const tmux = await inputs.probeTmux()
    trace.push(`tmux -V: ${tmux.detail}`)
    if (tmux.ok) return { backend: choice, reason: 'chosen with --backend', trace }
    throw new BackendUnavailableError(`--backend tmux, but tmux does not work here (${tmux.detail})`, {
      hint: `install tmux: ${tmuxInstallHint(inputs.platform, inputs.osRelease)}`,
    })
  }
  const it2 = await inputs.probeIt2()
  trace.push(`it2 session list: ${it2.ok ? 'works' : it2.detail}`)
  if (it2.ok) return { backend: choice, reason: 'chosen with --backend', trace }
  throw new BackendUnavailableError(`--backend iterm2, but it2 does not work here (${it2.detail})`, { hint: it2InstallHint() })
}

/** How to make the iTerm2 backend work. */
export function it2InstallHint(): string {
  return 'install the it2 CLI ("uv tool install it2", "pipx install it2" or "pip install --user it2") and enable iTerm2 → Settings → General → Magic → Enable Python API'
}

/** The install command for tmux on this OS. */
export function tmuxInstallHint(platform: NodeJS.Platform, osRelease = ''): string {
  if (platform === 'darwin') return '"brew install tmux" (or "port install tmux")'
  if (platform === 'win32') return 'tmux needs WSL; inside WSL "sudo apt-get install tmux"'
  const ids = osReleaseIds(osRelease)
  const has = (...names: string[]) => names.some((n) => ids.includes(n))
  if (has('debian', 'ubuntu')) return '"sudo apt-get install tmux"'
  if (has('fedora', 'rhel', 'centos')) return '"sudo dnf install tmux"'
  if (has('arch')) return '"sudo pacman -S tmux"'
  if (has('alpine')) return '"sudo apk add tmux"'
  if (has('suse', 'opensuse')) return '"sudo zypper install tmux"'
  if (platform === 'freebsd') return '"sudo pkg install tmux"'
  return 'your package manager: "sudo apt-get install tmux" (Debian/Ubuntu), "sudo dnf install tmux" (Fedora/RHEL), "sudo pacman -S tmux" (Arch), "brew install tmux" (macOS)'
}

function osReleaseIds(text: string): string[] {
  const ids: string[] = []
  for (const line of text.split('\n')) {
    const m = /^(ID|ID_LIKE)=(.*)$/.exec(line.trim())
    if (m) ids.push(...m[2].replace(/["']/g, '').toLowerCase().split(/\s+/))
  }
  return ids
}

/** Reads the real machine: `tmux -V` and `it2 session list` (each run at most once, with a timeout). */
export function systemDetectInputs(env: Env = process.env): DetectInputs {
  return {
    env,
    isTTY: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    platform: process.platform,
    osRelease: process.platform === 'linux' ? readOsRelease() : undefined,
    probeTmux: once(() => probe('tmux', ['-V'], env)),
    probeIt2: once(() => probe('it2', ['session', 'list'], env)),
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

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined
  return () => (p ??= fn())
}
