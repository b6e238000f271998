/**
 * A throwaway home for running an agent CLI outside a teammate (`swarm doctor`'s version and hook
 * probes): HOME, the XDG dirs and every registered CLI's config variables (its `configEnv`) point
 * into a fresh temp directory, removed afterwards — a probe never writes into the user's ~/.gemini, ~/.codex, ….
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { probeHomeConfigEnv } from './registry.js'

/** The home and XDG variables → where under the probe home (opencode's config lives under XDG's). */
const HOME_DIRS: Readonly<Record<string, string>> = {
  HOME: '.',
  USERPROFILE: '.',
  XDG_CONFIG_HOME: '.config',
  XDG_DATA_HOME: '.local/share',
  XDG_STATE_HOME: '.local/state',
  XDG_CACHE_HOME: '.cache',
}

/** `configEnv`: the probed adapter's own variables besides every registered CLI's (a user adapter's are not registered). */
export async function withProbeHome<T>(
  env: NodeJS.ProcessEnv,
  run: (env: NodeJS.ProcessEnv) => Promise<T>,
  configEnv: Readonly<Record<string, string>> = {},
): Promise<T> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-probe-home-'))
  try {
    const probeEnv: NodeJS.ProcessEnv = { ...env }
    for (const [name, sub] of Object.entries({ ...HOME_DIRS, ...probeHomeConfigEnv(), ...configEnv })) {
      probeEnv[name] = path.join(home, sub)
      await fs.mkdir(probeEnv[name], { recursive: true, mode: 0o700 })
    }
    return await run(probeEnv)
  } finally {
    await fs.rm(home, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 })
  }
}
