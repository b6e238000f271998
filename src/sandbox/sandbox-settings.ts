import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'

/**
 * The `sandbox` key of a settings file, with Claude Code's names, merged over the settings files
 * the way permissions are (later file wins for booleans, lists are unions). The sandbox is on
 * unless a settings file says `"enabled": false`.
 */
export const SandboxSettings = z.looseObject({
  enabled: z.boolean().optional(),
  autoAllowBashIfSandboxed: z.boolean().optional(),
  excludedCommands: z.array(z.string()).optional(),
  bwrapPath: z.string().optional(),
  /** Provider keys (PROVIDER_KEY_VARS) left in Bash commands' environment, sandboxed or not; swarm's own key, not Claude Code's. */
  keepEnv: z.array(z.string()).optional(),
  filesystem: z
    .looseObject({
      allowWrite: z.array(z.string()).optional(),
      denyWrite: z.array(z.string()).optional(),
      denyRead: z.array(z.string()).optional(),
    })
    .optional(),
  network: z
    .looseObject({
      allowedDomains: z.array(z.string()).optional(),
      allowUnixSockets: z.array(z.string()).optional(),
      allowAllUnixSockets: z.boolean().optional(),
    })
    .optional(),
})
export type SandboxSettings = z.infer<typeof SandboxSettings>

/** The merged sandbox settings; paths are absolute. */
export interface SandboxConfig {
  enabled: boolean
  /** Sandboxed Bash calls pass without asking (deny and ask rules still apply). Off by default in swarm. */
  autoAllow: boolean
  /** Command prefixes run outside the sandbox, through the ordinary permission check. */
  excludedCommands: string[]
  bwrapPath?: string
  allowWrite: string[]
  denyWrite: string[]
  denyRead: string[]
  /** False once any settings file lists `network.allowedDomains`: swarm has no domain proxy, so it cuts the network. */
  network: boolean
  /** Sandboxed commands may create AF_UNIX sockets (`network.allowAllUnixSockets`); by default the seccomp filter refuses them. */
  allowAllUnixSockets: boolean
  /** Of PROVIDER_KEY_VARS, those Bash commands keep (`sandbox.keepEnv`), sandboxed or not; the others are removed. */
  keepEnv: string[]
}

/**
 * The one list of provider credentials a command does not need and must not carry (the network is
 * open: a command could send them anywhere). Removed from every Bash call of swarm's agent —
 * sandboxed, excluded, with the sandbox off or unavailable — from settings hooks, and from the
 * shell of an agent CLI that sandboxes its own (Codex), unless `sandbox.keepEnv` names one.
 */
export const PROVIDER_KEY_VARS: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_GENERATIVE_AI_API_KEY',
  'DASHSCOPE_API_KEY',
  'OPENROUTER_API_KEY',
  'MISTRAL_API_KEY',
  'GROQ_API_KEY',
  'DEEPSEEK_API_KEY',
  'XAI_API_KEY',
  'TOGETHER_API_KEY',
  'FIREWORKS_API_KEY',
  'CEREBRAS_API_KEY',
]

/** The provider keys sandboxed commands lose under `config`. */
export function strippedProviderVars(config: Pick<SandboxConfig, 'keepEnv'>): string[] {
  return PROVIDER_KEY_VARS.filter((k) => !config.keepEnv.includes(k))
}

export function defaultSandboxConfig(): SandboxConfig {
  return {
    enabled: true,
    autoAllow: false,
    excludedCommands: [],
    allowWrite: [],
    denyWrite: [],
    denyRead: [],
    network: true,
    allowAllUnixSockets: false,
    keepEnv: [],
  }
}

/** Merges one file's `sandbox` into `into`; `diagnostics` gets what is accepted but not done as asked. */
export function mergeSandboxSettings(into: SandboxConfig, s: SandboxSettings, file: { path: string; baseDir: string }, diagnostics: string[]): void {
  if (s.enabled !== undefined) into.enabled = s.enabled
  if (s.autoAllowBashIfSandboxed !== undefined) into.autoAllow = s.autoAllowBashIfSandboxed
  if (s.bwrapPath !== undefined) into.bwrapPath = resolvePath(s.bwrapPath, file.baseDir)
  into.excludedCommands.push(...(s.excludedCommands ?? []))
  into.keepEnv.push(...(s.keepEnv ?? []))
  const fsSettings = s.filesystem ?? {}
  into.allowWrite.push(...(fsSettings.allowWrite ?? []).map((p) => resolvePath(p, file.baseDir)))
  into.denyWrite.push(...(fsSettings.denyWrite ?? []).map((p) => resolvePath(p, file.baseDir)))
  into.denyRead.push(...(fsSettings.denyRead ?? []).map((p) => resolvePath(p, file.baseDir)))
  if (s.network?.allowedDomains !== undefined) {
    into.network = false
    if (s.network.allowedDomains.length) {
      diagnostics.push(`${file.path}: sandbox.network.allowedDomains: swarm does not filter by domain, so sandboxed commands get no network at all`)
    }
  }
  if (s.network?.allowAllUnixSockets !== undefined) into.allowAllUnixSockets = s.network.allowAllUnixSockets
  if (s.network?.allowUnixSockets?.length && s.network.allowAllUnixSockets !== true) {
    diagnostics.push(
      `${file.path}: sandbox.network.allowUnixSockets: swarm cannot allow Unix sockets by path (seccomp sees no paths), so sandboxed commands get none — set sandbox.network.allowAllUnixSockets to allow them all`,
    )
  }
}

function resolvePath(p: string, baseDir: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(os.homedir(), p.slice(1))
  return path.resolve(baseDir, p)
}

/**
 * True when `command` is one of the excluded commands: it equals a prefix (`docker`, `docker:*`)
 * or starts with it and a space, and holds nothing that chains another command after it.
 */
export function isExcludedCommand(command: string, excluded: readonly string[]): boolean {
  const c = command.trim()
  if (/[;&|`$<>()\n\r]/.test(c)) return false
  return excluded.some((raw) => {
    const prefix = raw.replace(/:\*$/, '').trim()
    return prefix !== '' && (c === prefix || c.startsWith(`${prefix} `))
  })
}
