import { z } from 'zod'
import { settingsFiles } from '../permissions/rules/settings.js'
import { parseJsonFile, readFileIfExists } from '../util/fs.js'
import type { CacheSetting, PromptCacheTtl } from './cache-layout.js'

/**
 * An agent's prompt-cache setting: `promptCacheTtl` (`5m` | `1h`, Claude Code's name) from the
 * settings files (user, project, local — the last that sets it wins); DISABLE_PROMPT_CACHING=1
 * turns caching off. A bad value is a diagnostic, and the default (5 m) applies.
 */

const CacheFields = z.looseObject({ promptCacheTtl: z.unknown().optional() })
const Ttl = z.enum(['5m', '1h'])

export async function loadCacheSetting(cwd: string, env: NodeJS.ProcessEnv): Promise<{ cache: CacheSetting; diagnostics: string[] }> {
  const diagnostics: string[] = []
  if (isTruthy(env.DISABLE_PROMPT_CACHING)) return { cache: { enabled: false }, diagnostics }
  let ttl: PromptCacheTtl = '5m'
  for (const file of settingsFiles(cwd, env)) {
    const text = await readFileIfExists(file.path)
    if (text === undefined) continue
    const value = parseJsonFile(file.path, text, CacheFields).promptCacheTtl
    if (value === undefined) continue
    const parsed = Ttl.safeParse(value)
    if (parsed.success) ttl = parsed.data
    else diagnostics.push(`${file.path}: promptCacheTtl ${JSON.stringify(value)} is not 5m or 1h; ignored`)
  }
  return { cache: { enabled: true, ttl }, diagnostics }
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}
