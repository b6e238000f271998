import fs from 'node:fs/promises'
import path from 'node:path'
import { tasksRootDir, teamsDir } from '../../home/paths.js'
import type { ToolContext } from '../tool.js'

/**
 * Teammate file tools never see swarm's control plane (`<root>/teams`, `<root>/tasks`, the keys in
 * them), in any permission mode: a path is judged by the identity (device and inode) of the
 * directories it passes through, so symlinks, `..`, letter case and a root above it hide nothing.
 */

/** What a walk asks of each directory and link it meets; `skipped` counts what it left out. */
export interface ControlPlaneGuard {
  /** True when `abs` (absolute) is the control plane or inside it, however it is spelled. */
  contains(abs: string): Promise<boolean>
  /** A walk's test for a directory entry named `name` at `abs`: a control-plane dir (by identity). */
  isControlDir(abs: string, name: string): Promise<boolean>
}

/** The one-line note a search adds when it left the control plane out. */
export function skippedNote(count: number): string {
  return `(skipped ${count} ${count === 1 ? 'entry' : 'entries'} under the swarm control plane)`
}

/** A file tool refusing a path in the control plane (a tool failure, handed back to the model). */
export class ControlPlaneAccessError extends Error {
  override name = 'ControlPlaneAccessError'
  constructor(readonly target: string) {
    super(`${target} is in swarm's control plane (teams/, tasks/, keys): teammate tools can neither read nor list it`)
  }
}

/** The guard for the state root `env` names (SWARM_HOME, CLAUDE_CONFIG_DIR, ~/.claude). */
export function controlPlaneGuard(env: NodeJS.ProcessEnv = process.env): ControlPlaneGuard {
  const dirs = [teamsDir(env), tasksRootDir(env)].map((d) => path.resolve(d))
  const names = new Set(dirs.map((d) => path.basename(d).toLowerCase()))
  // Identities are read on each question: the dirs may be made (or replaced) while an agent runs.
  const identities = async () => new Set((await Promise.all(dirs.map(identityOf))).filter((id): id is string => id !== undefined))
  return {
    async contains(abs) {
      const p = path.resolve(abs)
      if (dirs.some((d) => isInside(d, p))) return true
      const ids = await identities()
      if (ids.size === 0) return false
      for (let dir = await deepestExisting(p); ; dir = path.dirname(dir)) {
        const id = await identityOf(dir)
        if (id !== undefined && ids.has(id)) return true
        if (path.dirname(dir) === dir) return false
      }
    },
    async isControlDir(abs, name) {
      if (!names.has(name.toLowerCase())) return false
      const id = await identityOf(abs)
      return id !== undefined && (await identities()).has(id)
    },
  }
}

/** The guard for a tool call: the agent's environment, not the process's. */
export function guardFor(ctx: Pick<ToolContext, 'env'>): ControlPlaneGuard {
  return controlPlaneGuard(ctx.env ?? process.env)
}

/** Throws ControlPlaneAccessError when `abs` is in the control plane. */
export async function assertOutsideControlPlane(ctx: Pick<ToolContext, 'env'>, abs: string): Promise<void> {
  if (await guardFor(ctx).contains(abs)) throw new ControlPlaneAccessError(abs)
}

/** True when absolute `p` is `dir` or beneath it. */
export function isInside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p)
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !path.isAbsolute(rel))
}

async function identityOf(p: string): Promise<string | undefined> {
  try {
    const s = await fs.stat(p)
    return `${s.dev}:${s.ino}`
  } catch {
    return undefined // not there (yet): nothing can be inside it
  }
}

/** The physical path of `p`'s deepest existing ancestor (or `p` itself), symlinks resolved. */
async function deepestExisting(p: string): Promise<string> {
  for (let dir = p; ; dir = path.dirname(dir)) {
    try {
      return await fs.realpath(dir)
    } catch {
      if (path.dirname(dir) === dir) return dir
    }
  }
}
