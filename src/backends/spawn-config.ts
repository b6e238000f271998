import path from 'node:path'
import { UsageError } from '../errors.js'
import { agentDir, agentId as makeAgentId } from '../home/paths.js'
import { NOFOLLOW, ensureDir, openNoFollow } from '../util/fs.js'
import type { TeammateSpawnConfig } from './types.js'

const COLOR_RE = /^[A-Za-z0-9#]{1,32}$/

/** Names the backend that started a member, in its env: an agent-CLI wrapper finds its own pane by it. */
export const BACKEND_ENV = 'SWARM_BACKEND'

/** `config` with the starting backend's name in its env. */
export function withBackendEnv(config: TeammateSpawnConfig, backend: string): TeammateSpawnConfig {
  return { ...config, env: { ...config.env, [BACKEND_ENV]: backend } }
}

/**
 * Checks what a backend is about to hand to tmux or a shell and returns the agent id. Names are
 * validated by agentId; a colour ends up in a tmux style, so it may only be a plain word.
 */
export function validateSpawnConfig(config: Pick<TeammateSpawnConfig, 'team' | 'name' | 'cwd' | 'color'> & { argv?: string[] }): string {
  const id = makeAgentId(config.name, config.team)
  if (config.argv !== undefined && (config.argv.length === 0 || config.argv[0] === '')) throw new UsageError(`no command to start ${id}`)
  if (!path.isAbsolute(config.cwd)) throw new UsageError(`the working directory of ${id} must be absolute (got ${JSON.stringify(config.cwd)})`)
  if (config.color !== undefined && !COLOR_RE.test(config.color)) throw new UsageError(`invalid colour ${JSON.stringify(config.color)}`)
  return id
}

/** `agents/<name>/pane.log` (or config.logFile), created 0600 so that tmux only appends to it. */
export async function prepareLogFile(config: TeammateSpawnConfig, env?: NodeJS.ProcessEnv): Promise<string> {
  const file = config.logFile ?? path.join(agentDir(config.team, config.name, env), 'pane.log')
  await ensureDir(path.dirname(file))
  const handle = await openNoFollow(file, NOFOLLOW.append) // tmux appends through `cat >>`: never to a link's target
  await handle.close()
  return file
}
