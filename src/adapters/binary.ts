/**
 * Where an agent CLI's executable is — the one lookup `spawn`, `team create` and `swarm doctor`
 * share: the adapter's own variable when it names one and it is set (`$SWARM_CLAUDE_BIN`), else
 * the first executable `binary` on PATH, then in SWARM_AGENT_BIN_DIR; a `binary` that is an absolute
 * path (a user-defined adapter's command may start with one) is that file.
 */
import fs from 'node:fs'
import path from 'node:path'
import { BackendUnavailableError } from '../errors.js'
import type { AgentAdapter } from './types.js'

export type BinaryLookup = { found: true; path: string } | { found: false; reason: string }

export function locateAgentBinary(adapter: Pick<AgentAdapter, 'binary' | 'binaryEnv'>, env: NodeJS.ProcessEnv): BinaryLookup {
  const explicit = adapter.binaryEnv ? env[adapter.binaryEnv] : undefined
  if (explicit) {
    return isExecutableFile(explicit)
      ? { found: true, path: path.resolve(explicit) }
      : { found: false, reason: `${adapter.binaryEnv}=${explicit} is not an executable file` }
  }
  if (path.isAbsolute(adapter.binary)) {
    return isExecutableFile(adapter.binary)
      ? { found: true, path: adapter.binary }
      : { found: false, reason: `\`${adapter.binary}\` is not installed (no executable file there)` }
  }
  const dirs = [...(env.PATH ?? '').split(path.delimiter), env.SWARM_AGENT_BIN_DIR].filter((d): d is string => Boolean(d))
  for (const d of dirs) {
    const file = path.join(d, adapter.binary)
    if (isExecutableFile(file)) return { found: true, path: file }
  }
  const where = env.SWARM_AGENT_BIN_DIR
    ? `not on PATH or in SWARM_AGENT_BIN_DIR=${env.SWARM_AGENT_BIN_DIR}`
    : 'not on PATH, SWARM_AGENT_BIN_DIR unset'
  return { found: false, reason: `\`${adapter.binary}\` is not installed (${where}${adapter.binaryEnv ? `, ${adapter.binaryEnv} unset` : ''})` }
}

/** The hint of a missing CLI that names no install command of its own. */
export const DEFAULT_INSTALL_HINT =
  'install it, or point SWARM_AGENT_BIN_DIR at the directory that holds it; `swarm doctor` lists the agent CLIs it finds'

/** The executable's path, or exit 7 in one line: the adapter, what is missing and where it was looked for. */
export function requireAgentBinary(adapter: Pick<AgentAdapter, 'kind' | 'binary' | 'binaryEnv' | 'installHint'>, env: NodeJS.ProcessEnv): string {
  const r = locateAgentBinary(adapter, env)
  if (r.found) return r.path
  throw new BackendUnavailableError(`${adapter.kind}: ${r.reason}`, { hint: adapter.installHint ?? DEFAULT_INSTALL_HINT })
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}
