/**
 * The hooks directory git uses in a work tree — `.git/hooks`, or wherever `core.hooksPath` points
 * (husky's `.husky`, inside the tree) — as git itself resolves it; reading config runs nothing. A
 * sandbox keeps it read-only: a hook written there runs at the user's next commit, unsandboxed.
 *
 * Asking git costs a process per Bash call, so the answer is kept per cwd and reused while nothing
 * it depends on changed: the `.git` git finds from the cwd, every config file git reads (repository,
 * worktree, global, XDG, system, and those `git config --show-origin` named), each by identity,
 * size and mtime, and the GIT_* environment. A config with an `include` (whose target this does not
 * follow) is never cached: git is asked every time.
 */
import fs from 'node:fs'
import path from 'node:path'
import { runCommand } from '../process/launch.js'

interface Cached {
  key: string
  hooks: string | undefined
  /** Config files git named when the answer was made (a system config of another prefix). */
  origins: string[]
}
const cache = new Map<string, Cached>()

/** The absolute hooks directory for `cwd`, or undefined outside a git work tree. */
export async function gitHooksDir(cwd: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const cached = cache.get(cwd)
  const key = configKey(cwd, env, cached?.origins ?? [])
  if (cached && key !== undefined && cached.key === key) return cached.hooks
  const [hooks, origins] = await Promise.all([askGit(cwd, env), key === undefined ? [] : configOrigins(cwd, env)])
  // The key again, with the files git named: what was read is what the next call compares.
  const filled = key === undefined ? undefined : configKey(cwd, env, origins)
  if (filled === undefined) cache.delete(cwd)
  else cache.set(cwd, { key: filled, hooks, origins })
  return hooks
}

async function askGit(cwd: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const r = await runCommand('git', ['-c', 'core.fsmonitor=false', '-C', cwd, 'rev-parse', '--git-path', 'hooks'], { env, timeoutMs: 5_000 })
    const out = r.stdout.trim()
    return r.code === 0 && out ? path.resolve(cwd, out) : undefined
  } catch {
    return undefined // no git, or not a work tree: no hooks to keep
  }
}

async function configOrigins(cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  try {
    const r = await runCommand('git', ['-C', cwd, 'config', '--list', '--show-origin', '--name-only'], { env, timeoutMs: 5_000 })
    const files = r.stdout.split('\n').flatMap((l) => (l.startsWith('file:') ? [l.slice('file:'.length).split('\t')[0]!] : []))
    return [...new Set(files.map((f) => path.resolve(cwd, f)))]
  } catch {
    return []
  }
}

/**
 * What the answer depends on, as a string; undefined when it must not be cached (a config with
 * an include, a `.git` file that cannot be read).
 */
function configKey(cwd: string, env: NodeJS.ProcessEnv, origins: readonly string[]): string | undefined {
  const parts: string[] = [JSON.stringify(Object.entries(env).filter(([k]) => k.startsWith('GIT_')))]
  const dotGit = findDotGit(cwd)
  const files = [...origins]
  if (dotGit) {
    let gitDir = dotGit
    if (!isDir(dotGit)) {
      const text = readSmall(dotGit)
      const m = text === undefined ? null : /^gitdir:\s*(.+)$/m.exec(text)
      if (!m) return undefined
      gitDir = path.resolve(path.dirname(dotGit), m[1]!.trim())
      parts.push(`gitfile:${text}`)
    }
    const common = readSmall(path.join(gitDir, 'commondir'))
    const commonDir = common === undefined ? gitDir : path.resolve(gitDir, common.trim())
    files.push(path.join(gitDir, 'config'), path.join(gitDir, 'config.worktree'), path.join(commonDir, 'config'), path.join(gitDir, 'commondir'))
  }
  parts.push(`dotgit:${dotGit ?? '-'}`)
  const home = env.HOME ?? ''
  files.push(
    path.join(home, '.gitconfig'),
    path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git', 'config'),
    '/etc/gitconfig',
    ...(env.GIT_CONFIG_GLOBAL ? [env.GIT_CONFIG_GLOBAL] : []),
    ...(env.GIT_CONFIG_SYSTEM ? [env.GIT_CONFIG_SYSTEM] : []),
  )
  for (const f of new Set(files)) {
    const st = statOf(f)
    parts.push(`${f}=${st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}` : '-'}`)
    // An include can pull core.hooksPath from a file not listed here: not cached.
    if (st && f.endsWith('config') && /^\s*\[\s*include/im.test(readSmall(f) ?? '')) return undefined
  }
  return parts.join('\n')
}

/** The `.git` (directory or file) git would find from `cwd` upwards. */
function findDotGit(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, '.git')
    if (statOf(candidate)) return candidate
    if (path.dirname(dir) === dir) return undefined
  }
}

function statOf(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p)
  } catch {
    return undefined
  }
}
function isDir(p: string): boolean {
  return statOf(p)?.isDirectory() ?? false
}
function readSmall(p: string): string | undefined {
  try {
    return fs.readFileSync(p, 'utf8')
  } catch {
    return undefined
  }
}
