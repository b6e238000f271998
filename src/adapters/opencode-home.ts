/**
 * An opencode home swarm owns: its XDG config/data/cache/state dirs under one directory (never
 * the user's ~/.config/opencode), its opencode.json, and the variables that keep it offline.
 */
import path from 'node:path'
import { atomicWriteFile, ensureDir } from '../util/fs.js'

/** Variables that keep opencode off the network and out of the user's files (each checked in 1.18.33). */
export const OPENCODE_QUIET_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_SHARE: '1',
  // It would read the user's ~/.claude (CLAUDE.md, skills) otherwise.
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
}

/** opencode's own XDG dirs under `dir`: never the user's ~/.config/opencode. */
export function opencodeDirs(dir: string): Record<string, string> {
  return {
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_CACHE_HOME: path.join(dir, 'cache'),
    XDG_STATE_HOME: path.join(dir, 'state'),
  }
}

/**
 * What opencode loads from its config dir that could grant it more or run code — agents (their own
 * permissions), commands, modes, plugins, tools — made empty by swarm; with opencode.json, the lock
 * file and node_modules they are read-only in its sandbox. It writes a .gitignore there itself.
 */
const LOADED_DIRS = ['agent', 'agents', 'command', 'commands', 'mode', 'modes', 'plugin', 'plugins', 'tool', 'tools']

/**
 * opencode npm-installs `@opencode-ai/plugin` into each config dir in the background unless the
 * dir has a node_modules and a lock file naming it: swarm loads no plugin there, so it says so.
 * Returns what the CLI must not change.
 */
export async function writeOpencodeConfigDir(configHome: string, config: unknown): Promise<string[]> {
  const dir = path.join(configHome, 'opencode')
  const fixed = ['node_modules', ...LOADED_DIRS].map((d) => path.join(dir, d))
  for (const d of fixed) await ensureDir(d)
  await atomicWriteFile(
    path.join(dir, 'package-lock.json'),
    `${JSON.stringify({ packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } })}\n`,
  )
  await atomicWriteFile(path.join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`)
  return [...fixed, path.join(dir, 'package-lock.json'), path.join(dir, 'opencode.json')]
}
