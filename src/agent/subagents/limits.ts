import fs from 'node:fs/promises'
import { UsageError } from '../../errors.js'
import { settingsFiles } from '../../permissions/rules/settings.js'

/**
 * The knobs of delegation, read from the environment once per session: nesting depth, the
 * per-session spawn quota, when a foreground subagent moves to the background, and whether an
 * `Agent` call without `subagent_type` forks the caller. Bad values are a usage error, never ignored.
 */
export interface DelegationLimits {
  /** Deepest subagent allowed: the lead's subagents are at depth 1. */
  maxDepth: number
  /** Subagents one session (a leader, a batch run) may start in all. */
  maxPerSession: number
  /** A foreground subagent still running after this long is moved to the background; 0 never. */
  autoBackgroundMs: number
  /** `Agent` without `subagent_type` forks the caller (SWARM_FORK_SUBAGENT=1 or the setting). */
  forkEnabled: boolean
}

export const DEFAULT_MAX_DEPTH = 3
export const DEFAULT_MAX_PER_SESSION = 100
export const DEFAULT_AUTO_BACKGROUND_MS = 120_000

export function delegationLimits(env: NodeJS.ProcessEnv, settings: { forkSubagent?: boolean } = {}): DelegationLimits {
  return {
    maxDepth: count(env, 'SWARM_MAX_SUBAGENT_SPAWN_DEPTH', DEFAULT_MAX_DEPTH),
    maxPerSession: count(env, 'SWARM_MAX_SUBAGENTS_PER_SESSION', DEFAULT_MAX_PER_SESSION),
    autoBackgroundMs: count(env, 'SWARM_AUTO_BACKGROUND_MS', DEFAULT_AUTO_BACKGROUND_MS),
    forkEnabled:
      env.SWARM_FORK_SUBAGENT !== undefined && env.SWARM_FORK_SUBAGENT !== '' ? truthy(env.SWARM_FORK_SUBAGENT) : settings.forkSubagent === true,
  }
}

function count(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw.trim()))
    throw new UsageError(`${name}=${JSON.stringify(raw)} is not a whole number`, { hint: `set ${name} to a number such as ${fallback}, or unset it` })
  return Number(raw.trim())
}

function truthy(v: string): boolean {
  return ['1', 'true', 'yes', 'on'].includes(v.trim().toLowerCase())
}

/**
 * `forkSubagent` from the settings files (user, project, local; the last that sets it wins). A
 * file that does not parse is left to the permission loader, which refuses it loudly.
 */
export async function forkSetting(cwd: string, env: NodeJS.ProcessEnv): Promise<boolean | undefined> {
  let value: boolean | undefined
  for (const file of settingsFiles(cwd, env)) {
    const text = await fs.readFile(file.path, 'utf8').catch(() => undefined)
    if (text === undefined) continue
    try {
      const parsed = JSON.parse(text) as { forkSubagent?: unknown }
      if (typeof parsed.forkSubagent === 'boolean') value = parsed.forkSubagent
    } catch {
      // A corrupt settings file is reported by the permission layer, which reads the same files.
    }
  }
  return value
}
