import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { rootDir } from '../home/paths.js'
import { readJsonFile } from '../util/fs.js'
import { git, gitRaw } from './git.js'
import type { Env } from '../home/env.js'

/** Linked when no settings file says otherwise. */
export const DEFAULT_LINKED_DIRS = ['node_modules']

const WorktreeSettings = z.looseObject({
  worktree: z.looseObject({ symlinkDirectories: z.array(z.string()).optional() }).optional(),
})

/**
 * The ignored directories to share with each worktree: Claude Code's `worktree.symlinkDirectories`
 * setting, the most specific file that sets it winning (project local, project, user);
 * `node_modules` when none does. Entries are paths relative to the top of the tree.
 */
export async function linkedDirs(top: string, env: Env): Promise<string[]> {
  const files = [
    path.join(top, '.claude', 'settings.local.json'),
    path.join(top, '.claude', 'settings.json'),
    path.join(rootDir(env), 'settings.json'),
  ]
  for (const file of files) {
    const dirs = (await readJsonFile(file, WorktreeSettings))?.worktree?.symlinkDirectories
    if (dirs) return dirs
  }
  return DEFAULT_LINKED_DIRS
}

/** A relative path inside the tree: no absolute paths, no `..`, nothing empty. */
function safeRelative(entry: string): string | undefined {
  const norm = path.posix.normalize(entry.replace(/\\/g, '/')).replace(/\/+$/, '')
  if (!norm || norm === '.' || path.posix.isAbsolute(norm) || norm.split('/').includes('..') || norm.startsWith('.git')) return undefined
  return norm
}

/**
 * Makes each of `dirs` that is a directory in the main tree AND ignored by git there available in
 * the worktree as a symlink to it (never a tracked directory: that would be committed through).
 * The main tree's copy is not touched. The links are excluded in the repository's `info/exclude`
 * (a pattern for a path the main tree already ignores), so they never show as changes nor get
 * committed from the worktree. Returns the paths linked.
 */
export async function linkIgnoredDirs(top: string, wtPath: string, dirs: string[], env: Env): Promise<string[]> {
  const linked: string[] = []
  for (const entry of dirs) {
    const rel = safeRelative(entry)
    if (!rel) continue
    const source = path.join(top, rel)
    const target = path.join(wtPath, rel)
    if (!(await fs.stat(source).catch(() => undefined))?.isDirectory()) continue
    if ((await gitRaw(top, ['check-ignore', '--quiet', rel], env)).code !== 0) continue
    if (await fs.lstat(target).catch(() => undefined)) continue // the checkout has something there
    if (!(await fs.stat(path.dirname(target)).catch(() => undefined))?.isDirectory()) continue
    await fs.symlink(source, target, 'dir')
    linked.push(rel)
  }
  if (linked.length)
    await addExcludes(
      top,
      linked.map((l) => `/${l}`),
      env,
    )
  return linked
}

/** Removes the links made by linkIgnoredDirs (only symlinks: a real directory there is left alone). */
export async function unlinkIgnoredDirs(wtPath: string, links: string[]): Promise<void> {
  for (const rel of links) {
    const target = path.join(wtPath, rel)
    if ((await fs.lstat(target).catch(() => undefined))?.isSymbolicLink()) await fs.unlink(target)
  }
}

/** Appends patterns to the repository's `info/exclude` (local to this clone, never committed). */
export async function addExcludes(top: string, patterns: string[], env: Env): Promise<void> {
  const infoDir = (await git(top, ['rev-parse', '--path-format=absolute', '--git-path', 'info'], env)).trim()
  const file = path.join(infoDir, 'exclude')
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return ''
    throw err
  })
  const have = new Set(text.split('\n'))
  const missing = patterns.filter((p) => !have.has(p))
  if (!missing.length) return
  await fs.mkdir(infoDir, { recursive: true })
  await fs.appendFile(file, `${text && !text.endsWith('\n') ? '\n' : ''}${missing.join('\n')}\n`)
}
