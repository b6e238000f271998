import fs from 'node:fs/promises'
import path from 'node:path'
import { type ToolContext, resolveToolPath } from '../tool.js'
import { assertOutsideControlPlane, isInside } from './control-plane-guard.js'

/**
 * Throws when `file` is in swarm's control plane, or unless it lies inside one of
 * `ctx.writableRoots` (when the agent has such a limit). Symbolic links are resolved on the
 * existing part of the path, so a link inside a root cannot point the write outside it.
 */
export async function assertWritable(ctx: Pick<ToolContext, 'writableRoots' | 'env'>, file: string): Promise<void> {
  await assertOutsideControlPlane(ctx, file)
  const roots = ctx.writableRoots
  if (!roots) return
  const real = await realpathOfNearest(file)
  for (const root of roots) {
    const realRoot = await realpathOfNearest(root)
    if (isInside(realRoot, real)) return
  }
  throw new Error(`${file} is outside the directories this agent may write to (${roots.join(', ')})`)
}

/** The absolute path a Write or Edit of `filePath` targets, refused as assertWritable refuses it. */
export async function writableTarget(ctx: Pick<ToolContext, 'writableRoots' | 'env' | 'cwd'>, filePath: string): Promise<string> {
  const file = resolveToolPath(ctx, filePath)
  await assertWritable(ctx, file)
  return file
}

/** realpath of the deepest existing ancestor, with the missing tail appended. */
async function realpathOfNearest(p: string): Promise<string> {
  let existing = path.resolve(p)
  const tail: string[] = []
  for (;;) {
    try {
      return path.join(await fs.realpath(existing), ...tail)
    } catch {
      const parent = path.dirname(existing)
      if (parent === existing) return path.join(existing, ...tail)
      tail.unshift(path.basename(existing))
      existing = parent
    }
  }
}
