import fs from 'node:fs/promises'
import path from 'node:path'
import { git, gitRaw, listWorktrees, resolveCommit } from './git.js'
import { worktreeLinkProblem } from './integrity.js'
import type { Env } from '../home/env.js'

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
  /** The commit the branch pointed at when looked at (its deletion is conditional on it). */
  branchTip?: string
  /** The repository itself is gone (deleted, moved, unmounted): nothing can be judged, so nothing is forgotten. */
  repoMissing?: boolean
  /** `git status --porcelain` lines: modified, staged, untracked (not ignored) files. */
  uncommitted: string[]
  /** Ignored files and directories (build output, .env…) other than swarm's links: they go with a removed worktree. */
  ignored: string[]
  /** The worktree's HEAD is on another branch than its own (that branch is never deleted). */
  otherBranch?: string
  /** The newest commits beyond the base that no other branch holds (at most UNMERGED_SHOWN). */
  unmerged: UnmergedCommit[]
  unmergedCount: number
  /** Nothing to lose: no uncommitted change and no unmerged commit. */
  clean: boolean
  /** Its `.git` no longer points where swarm made it (see worktreeLinkProblem): no git is run in it. */
  tampered?: string
}

const UNMERGED_SHOWN = 20

/**
 * Looks at a worktree as `git` sees it. Commits count as unmerged when they are beyond the base
 * and on no other local branch: once merged (or cherry-picked onto a branch by merge), the branch
 * can go without losing anything.
 */
export async function inspectWorktree(w: WorktreeRef, env: Env): Promise<WorktreeContents> {
  const none = { exists: false, branchExists: false, uncommitted: [], ignored: [], unmerged: [], unmergedCount: 0 }
  if (!(await fs.stat(w.repo).catch(() => undefined))?.isDirectory()) return { ...none, repoMissing: true, clean: false }
  const tampered = w.baseRef && w.path && (await fs.stat(w.path).catch(() => undefined)) ? await worktreeLinkProblem(w, env) : undefined
  if (tampered) {
    const tip = await resolveCommit(w.repo, `refs/heads/${w.branch}`, env)
    return { ...none, exists: true, branchExists: tip !== undefined, ...(tip ? { branchTip: tip } : {}), clean: false, tampered }
  }
  const exists = await isWorktreeTop(w.path, env)
  const branchTip = await resolveCommit(w.repo, `refs/heads/${w.branch}`, env)
  let uncommitted: string[] = []
  let ignored: string[] = []
  let otherBranch: string | undefined
  const tips: string[] = []
  if (exists) {
    const links = new Set(w.links ?? [])
    const entry = (line: string) => line.slice(3).replace(/\/$/, '')
    const status = (await git(w.path, ['status', '--porcelain', '--untracked-files=normal', '--ignored=matching'], env)).split('\n').filter(Boolean)
    uncommitted = status.filter((l) => !l.startsWith('!! ') && !links.has(entry(l)))
    ignored = status.filter((l) => l.startsWith('!! ') && !links.has(entry(l))).map((l) => l.slice(3))
    const head = await resolveCommit(w.path, 'HEAD', env)
    if (head) tips.push(head)
    const on = await gitRaw(w.path, ['symbolic-ref', '--quiet', '--short', 'HEAD'], env)
    if (on.code === 0 && on.stdout.trim() !== w.branch) otherBranch = on.stdout.trim()
  } else if (w.path) {
    // Its directory is gone but git still has its HEAD: commits made there detached live only in it.
    const listed = (await listWorktrees(w.repo, env)).find((l) => l.path === path.resolve(w.path))
    if (listed?.head) tips.push(listed.head)
  }
  if (branchTip) tips.push(branchTip)
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
  return {
    exists,
    branchExists: branchTip !== undefined,
    ...(branchTip ? { branchTip } : {}),
    uncommitted,
    ignored,
    ...(otherBranch ? { otherBranch } : {}),
    unmerged,
    unmergedCount,
    clean: uncommitted.length === 0 && unmergedCount === 0,
  }
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
  if (c.repoMissing) return 'its repository is gone (deleted, moved or not mounted)'
  if (c.tampered) return `refused: ${c.tampered}`
  const parts: string[] = []
  if (c.uncommitted.length) {
    const files = c.uncommitted.map((l) => l.slice(3))
    parts.push(`${plural(files.length, 'uncommitted file')} (${shortList(files)})`)
  }
  if (c.unmergedCount) parts.push(`${plural(c.unmergedCount, 'unmerged commit')} (${shortList(c.unmerged.map((u) => `${u.sha} ${u.subject}`))})`)
  if (!c.exists) parts.push('its directory is gone')
  return parts.join(', ') || 'clean'
}

/** What goes with a removed worktree although it was clean: ignored files, and where its HEAD was. */
export function describeLeftovers(c: WorktreeContents): string {
  const parts: string[] = []
  if (c.ignored.length) parts.push(`ignored files deleted with it: ${shortList(c.ignored)}`)
  if (c.otherBranch) parts.push(`it had branch ${c.otherBranch} checked out, which is kept`)
  return parts.join('; ')
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}

function shortList(items: string[], max = 3): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')}, …`
}
