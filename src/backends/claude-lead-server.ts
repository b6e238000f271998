import fs from 'node:fs/promises'
import { claudeLeadAlive, claudeLeadOf, claudeTmuxSocketPath } from '../teams/claude-lead.js'
import type { TeamFile } from '../teams/types.js'
import { TmuxClient, isNoServer } from './tmux-client.js'
import type { Env } from '../home/env.js'

/**
 * The `claude-swarm-<pid>` tmux socket a gone Claude Code lead leaves behind (tmux does not remove
 * a `-L` socket's file when its server dies): removed once its lead's process is gone and no server
 * answers on it. A server that still runs there is never touched, whoever's it is. Returns the
 * removed file's path.
 */
export async function removeGoneClaudeLeadSocket(config: TeamFile, env: Env): Promise<string | undefined> {
  const lead = claudeLeadOf(config)
  if (!lead?.pid || claudeLeadAlive(lead)) return undefined
  const file = claudeTmuxSocketPath(lead, env)
  const stat = await fs.lstat(file).catch(() => undefined)
  if (!stat?.isSocket()) return undefined
  const r = await new TmuxClient({ socket: { path: file }, env, timeoutMs: 2_000 }).exec(['list-sessions', '-F', '#{session_name}'])
  if (r.code === 0 || !isNoServer(r.stderr)) return undefined
  await fs.rm(file, { force: true })
  return file
}
