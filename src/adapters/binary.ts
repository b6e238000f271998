/**
 * Where an agent CLI's executable is — the one lookup `spawn` and `swarm doctor` share: the
 * adapter's own variable when it names one and it is set (`$SWARM_CLAUDE_BIN`), else the first
 * executable `binary` on PATH, then in SWARM_AGENT_BIN_DIR.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { AgentAdapter } from './types.js'

export type BinaryLookup = { found: true; path: string } | { found: false; reason: string }

export function locateAgentBinary(adapter: Pick<AgentAdapter, 'binary' | 'binaryEnv'>, env: NodeJS.ProcessEnv): BinaryLookup {
  const explicit = adapter.binaryEnv ? env[adapter.binaryEnv] : undefined
  if (explicit) {
    return isExecutableFile(explicit)
      ? { found: true, path: path.resolve(explicit) }
      : { found: false, reason: `${adapter.binaryEnv}=${explicit} is not an executable file` }
  }
  const dirs = [...(env.PATH ?? '').split(path.delimiter), env.SWARM_AGENT_BIN_DIR].filter((d): d is string => Boolean(d))
  for (const d of dirs) {
    const file = path.join(d, adapter.binary)
    if (isExecutableFile(file)) return { found: true, path: file }
  }
  const where = env.SWARM_AGENT_BIN_DIR ? 'on PATH nor in SWARM_AGENT_BIN_DIR' : 'on PATH'
  return { found: false, reason: `${adapter.binary} not ${where}${adapter.binaryEnv ? `; ${adapter.binaryEnv} unset` : ''}` }
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}
