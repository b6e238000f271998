import fs from 'node:fs/promises'
import path from 'node:path'
import { gitRaw } from './git.js'
import type { Env } from '../home/env.js'

/**
 * Before swarm runs git in a worktree it made, the worktree must still be the one it made: its
 * `.git` a plain file naming `<repo's git dir>/worktrees/<name>`, whose `gitdir` names it back.
 * A `.git` replaced by a directory or by a link to a git dir of the teammate's choosing would let
 * that dir's config decide what git runs; such a worktree is refused, with the reason.
 */
export async function worktreeLinkProblem(w: { repo: string; path: string }, env: Env): Promise<string | undefined> {
  const dotGit = path.join(w.path, '.git')
  const stat = await fs.lstat(dotGit).catch(() => undefined)
  if (!stat) return `${dotGit} is missing`
  if (stat.isSymbolicLink()) return `${dotGit} was replaced by a symbolic link`
  if (stat.isDirectory()) return `${dotGit} was replaced by a directory`
  if (!stat.isFile()) return `${dotGit} is not a file`
  const text = await fs.readFile(dotGit, 'utf8').catch(() => '')
  const m = /^gitdir: (.+)\n?$/.exec(text)
  if (!m) return `${dotGit} does not hold a "gitdir:" line any more`
  const named = await real(path.resolve(w.path, m[1].trim()))
  const common = await commonDir(w.repo, env)
  if (!common) return `the git directory of ${w.repo} cannot be found`
  if (path.dirname(named) !== path.join(common, 'worktrees')) return `${dotGit} points at ${named}, not into ${path.join(common, 'worktrees')}`
  const back = (await fs.readFile(path.join(named, 'gitdir'), 'utf8').catch(() => '')).trim()
  if (!back || (await real(path.resolve(named, back))) !== (await real(dotGit))) return `${named} does not name ${dotGit} back`
  return undefined
}

async function commonDir(repo: string, env: Env): Promise<string | undefined> {
  const r = await gitRaw(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir'], env)
  return r.code === 0 ? real(r.stdout.trim()) : undefined
}

async function real(p: string): Promise<string> {
  return fs.realpath(p).catch(() => path.resolve(p))
}
