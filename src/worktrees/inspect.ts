import fs from 'node:fs/promises'
import path from 'node:path'
import { branchExists, git, gitRaw, resolveCommit } from './git.js'

type Env = NodeJS.ProcessEnv

/** Enough to find a worktree and judge what is in it. */
export interface WorktreeRef {
  /** Top of the main working tree. */
  repo: string
  path: string
  branch: string
  /** The commit it was made from (absent for a worktree swarm has no record of). */
  baseRef?: string
  /** Symlinks swarm made in it (not the teammate's work). */
  links?: string[]
}

/** A commit on the worktree's branch that no other branch has. */
export interface UnmergedCommit {
  sha: string
  subject: string
}

/** What a worktree holds that removing it would destroy. */
export interface WorktreeContents {
  /** The directory is there and git knows it as a worktree. */
  exists: boolean
  branchExists: boolean
  /** `git status --porcelain` lines: modified, staged, untracked (not ignored) files. */
  uncommitted: string[]
  /** The newest commits beyond the base that no other branch holds (at most UNMERGED_SHOWN). */
  unmerged: UnmergedCommit[]
  unmergedCount: number
  /** Nothing to lose: no uncommitted change and no unmerged commit. */
  clean: boolean
}

const UNMERGED_SHOWN = 20

/**
 * Looks at a worktree as `git` sees it. Commits count as unmerged when they are beyond the base
 * and on no other local branch: once merged (or cherry-picked onto a branch by merge), the branch
 * can go without losing anything.
 */
export async function inspectWorktree(w: WorktreeRef, env: Env): Promise<WorktreeContents> {
  // The whole repository is gone (deleted or moved): nothing of it is left here to lose.
  if (!(await fs.stat(w.repo).catch(() => undefined))?.isDirectory()) return { exists: false, branchExists: false, uncommitted: [], unmerged: [], unmergedCount: 0, clean: true }
  const exists = await isWorktreeTop(w.path, env)
  const hasBranch = await branchExists(w.repo, w.branch, env)
  let uncommitted: string[] = []
  const tips: string[] = []
  if (exists) {
    const links = new Set(w.links ?? [])
    const status = await git(w.path, ['status', '--porcelain', '--untracked-files=normal'], env)
    uncommitted = status
      .split('\n')
      .filter(Boolean)
      .filter((line) => !links.has(line.slice(3).replace(/\/$/, '')))
    const head = await resolveCommit(w.path, 'HEAD', env)
    if (head) tips.push(head)
  }
  if (hasBranch) tips.push(`refs/heads/${w.branch}`)
  let unmerged: UnmergedCommit[] = []
  let unmergedCount = 0
  if (tips.length) {
    const base = w.baseRef && (await resolveCommit(w.repo, w.baseRef, env))
    const range = [...tips, '--not', ...(base ? [base] : []), `--exclude=${w.branch}`, '--branches']
    unmergedCount = Number((await git(w.repo, ['rev-list', '--count', ...range], env)).trim())
    if (unmergedCount) {
      const log = await git(w.repo, ['log', `-n${UNMERGED_SHOWN}`, '--format=%h%x09%s', ...range], env)
      unmerged = log
        .split('\n')
        .filter(Boolean)
        .map((l) => ({ sha: l.split('\t')[0], subject: l.slice(l.indexOf('\t') + 1) }))
    }
  }
  return { exists, branchExists: hasBranch, uncommitted, unmerged, unmergedCount, clean: uncommitted.length === 0 && unmergedCount === 0 }
}

/** `dir` exists and is the top of a git working tree. */
export async function isWorktreeTop(dir: string, env: Env): Promise<boolean> {
  if (!dir) return false // a branch without a worktree
  const real = await fs.realpath(dir).catch(() => undefined)
  if (!real) return false
  const top = await gitRaw(real, ['rev-parse', '--show-toplevel'], env)
  return top.code === 0 && path.resolve(top.stdout.trim()) === real
}

/** One line for people: "2 uncommitted files (a.txt, b.txt), 1 unmerged commit (abc123 fix)". */
export function describeContents(c: WorktreeContents): string {
  const parts: string[] = []
  if (c.uncommitted.length) {
    const files = c.uncommitted.map((l) => l.slice(3))
    parts.push(`${plural(files.length, 'uncommitted file')} (${shortList(files)})`)
  }
  if (c.unmergedCount) parts.push(`${plural(c.unmergedCount, 'unmerged commit')} (${shortList(c.unmerged.map((u) => `${u.sha} ${u.subject}`))})`)
  if (!c.exists) parts.push('its directory is gone')
  return parts.join(', ') || 'clean'
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}

function shortList(items: string[], max = 3): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')}, …`
}
