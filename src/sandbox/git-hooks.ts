/**
 * The hooks directory git uses in a work tree — `.git/hooks`, or wherever `core.hooksPath` points
 * (husky's `.husky`, inside the tree) — as git itself resolves it; reading config runs nothing. A
 * sandbox keeps it read-only: a hook written there runs at the user's next commit, unsandboxed.
 */
import path from 'node:path'
import { runCommand } from '../process/launch.js'

/** The absolute hooks directory for `cwd`, or undefined outside a git work tree. */
export async function gitHooksDir(cwd: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const r = await runCommand('git', ['-c', 'core.fsmonitor=false', '-C', cwd, 'rev-parse', '--git-path', 'hooks'], { env, timeoutMs: 5_000 })
    const out = r.stdout.trim()
    return r.code === 0 && out ? path.resolve(cwd, out) : undefined
  } catch {
    return undefined // no git, or not a work tree: no hooks to keep
  }
}
