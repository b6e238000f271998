import fs from 'node:fs/promises'
import path from 'node:path'
import { ConflictError, ExitCode, SwarmError, errorMessage } from '../errors.js'
import { validateName } from '../home/paths.js'
import { pathExists } from '../util/fs.js'
import { branchExists, checkoutTop, git, gitRaw, listWorktrees, mainWorktree, resolveCommit } from './git.js'
import { type WorktreeContents, type WorktreeRef, describeContents, inspectWorktree } from './inspect.js'
import { worktreeLinkProblem } from './integrity.js'
import { addExcludes, linkIgnoredDirs, linkedDirs, unlinkIgnoredDirs } from './links.js'
import { withFileLock } from '../util/lock.js'
import { type WorktreeRecord, creationLockFile, deleteWorktreeRecord, readWorktreeRecords, writeWorktreeRecord } from './record.js'
import { defaultSlug, validateSlug } from './slug.js'
import type { Env } from '../home/env.js'

/** Where the worktrees live, relative to the top of the main working tree (as in Claude Code). */
export const WORKTREES_DIR = path.join('.claude', 'worktrees')

/** `swarm/<team>/<name>` */
export function worktreeBranch(team: string, name: string): string {
  return `swarm/${validateName(team, 'team')}/${validateName(name, 'agent')}`
}

export interface CreateWorktreeOptions {
  /** Any directory inside the repository (the lead's cwd, or `--cwd`). */
  repoDir: string
  team: string
  /** The teammate (or subagent) name; part of the branch. */
  name: string
  /** The directory name under `.claude/worktrees/` (default `<team>-<name>`). */
  slug?: string
  /** Environment for git (default process.env). */
  env?: Env
}

/** A teammate's worktree: its record, and whether it was there already. */
export type Worktree = WorktreeRecord & {
  /** True when the worktree existed already (same path, same branch) and was reused as it is. */
  reused: boolean
}

/** What createWorktree will do, checked without changing anything. */
export interface WorktreePlan {
  team: string
  name: string
  slug: string
  repo: string
  path: string
  branch: string
  /** The commit the new worktree starts from. */
  head: string
  /** `repoDir` relative to the top of its checkout: the teammate starts there in its worktree too. */
  subdir: string
  /** The worktree exists already at this path on this branch: it is reused, not made. */
  existing?: boolean
}

/**
 * Everything createWorktree checks before it changes anything: names and slug, git present, a
 * repository with a commit, the path free (or our own worktree there to reuse), the checkout it
 * is made from (the one containing `repoDir`, main or linked) without uncommitted changes to
 * tracked files (the worktree starts from that checkout's HEAD, without them), and no branch of
 * that name already. Each failure is a SwarmError with a hint.
 */
export async function planWorktree(o: CreateWorktreeOptions): Promise<WorktreePlan> {
  const env = o.env ?? process.env
  const branch = worktreeBranch(o.team, o.name)
  const slug = o.slug !== undefined ? validateSlug(o.slug) : defaultSlug(o.team, o.name)
  const repo = await mainWorktree(o.repoDir, env)
  const wtPath = path.join(repo, WORKTREES_DIR, slug)
  // Placed beside the main tree, but made from the checkout the lead works in (maybe a linked one).
  const here = await checkoutTop(o.repoDir, env)
  const head = await resolveCommit(here, 'HEAD', env)
  if (!head) {
    throw new SwarmError('SWARM_GIT_NO_COMMIT', `the repository at ${here} has no commit yet, so there is nothing to check out in a worktree`, {
      exitCode: ExitCode.usage,
      hint: 'make a first commit, or spawn without --worktree',
    })
  }
  const subdir = path.relative(here, await fs.realpath(path.resolve(o.repoDir)))
  const plan: WorktreePlan = { team: o.team, name: o.name, slug, repo, path: wtPath, branch, head, subdir }
  const registered = (await listWorktrees(repo, env)).find((w) => w.path === wtPath)
  if (registered && !registered.prunable) {
    if (registered.branch === branch) {
      const tampered = await worktreeLinkProblem({ repo, path: wtPath }, env)
      if (tampered) throw tamperedError(wtPath, tampered)
      return { ...plan, existing: true }
    }
    throw new ConflictError(
      'SWARM_WORKTREE_PATH_TAKEN',
      `${wtPath} is already a worktree, of ${registered.branch ? `branch ${registered.branch}` : 'a detached HEAD'}`,
      {
        hint: 'give this one another name (--worktree <name>), or see "swarm worktrees <team>"',
      },
    )
  }
  if (await pathExists(wtPath)) {
    throw new ConflictError('SWARM_WORKTREE_PATH_TAKEN', `${wtPath} exists but is not a git worktree`, {
      hint: 'move it away, or pick another worktree name',
    })
  }
  if ((await gitRaw(repo, ['check-ref-format', `refs/heads/${branch}`], env)).code !== 0) {
    throw new SwarmError('SWARM_BAD_BRANCH', `${branch} is not a valid git branch name`, { exitCode: ExitCode.usage, hint: 'rename the teammate' })
  }
  const dirty = (await git(here, ['status', '--porcelain', '--untracked-files=no'], env)).split('\n').filter(Boolean)
  if (dirty.length) {
    const files = dirty.map((l) => l.slice(3))
    throw new ConflictError(
      'SWARM_MAIN_DIRTY',
      `the checkout at ${here} has uncommitted changes (${files.slice(0, 3).join(', ')}${files.length > 3 ? ', …' : ''}), which a worktree made from HEAD would not have`,
      {
        hint: 'commit or stash them first, or spawn without --worktree',
      },
    )
  }
  if (await branchExists(repo, branch, env)) {
    throw new ConflictError('SWARM_BRANCH_EXISTS', `branch ${branch} exists already in ${repo} (left by an earlier team of that name?)`, {
      hint: `look at it (git log ${branch}), merge or delete it (git branch -d ${branch}), or give the teammate another name`,
    })
  }
  return plan
}

/**
 * Gives `name` a git worktree of its own at `<repo>/.claude/worktrees/<slug>` on a new branch
 * `swarm/<team>/<name>` from HEAD, with the main tree's ignored directories (node_modules…)
 * linked in, and records it (see record.ts). A worktree already there on that branch is reused.
 * Checks first (planWorktree); when a step fails after that, what was made is taken away again.
 */
export async function createWorktree(o: CreateWorktreeOptions): Promise<Worktree> {
  const env = o.env ?? process.env
  // Names first: nothing reaches git (nor the lock) with an invalid one.
  worktreeBranch(o.team, o.name)
  if (o.slug !== undefined) validateSlug(o.slug)
  else defaultSlug(o.team, o.name)
  const repo = await mainWorktree(o.repoDir, env)
  // Two `git worktree add`s racing for one path can both "succeed" into the same directory: one at a time per repository, checked under the lock.
  return withFileLock(creationLockFile(repo, env), async () => createPlanned(await planWorktree(o), env), { initial: '' })
}

async function createPlanned(plan: WorktreePlan, env: Env): Promise<Worktree> {
  if (plan.existing) {
    const known = (await readWorktreeRecords(plan.team, env)).records.find((r) => r.path === plan.path && r.repo === plan.repo)
    if (known) return { ...known, reused: true }
    const rec = toRecord(plan, plan.head, [])
    await writeWorktreeRecord(rec, env)
    return { ...rec, reused: true }
  }
  await addExcludes(plan.repo, ['/.claude/worktrees/'], env)
  try {
    await git(plan.repo, ['worktree', 'add', '-b', plan.branch, plan.path, plan.head], env)
  } catch (err) {
    // git made nothing at the path; a branch it made before failing goes, unless another worktree has it (a concurrent spawn).
    await dropUnusedBranch(plan, env).catch(() => undefined)
    throw err
  }
  try {
    const links = await linkIgnoredDirs(plan.repo, plan.path, await linkedDirs(plan.repo, env), env)
    const rec = toRecord(plan, plan.head, links)
    await writeWorktreeRecord(rec, env)
    return { ...rec, reused: false }
  } catch (err) {
    await undoCreate(plan, env).catch((undo) => {
      throw new SwarmError('SWARM_WORKTREE_UNDO_FAILED', `${errorMessage(err)}; and cleaning up ${plan.path} failed too: ${errorMessage(undo)}`, {
        exitCode: ExitCode.processFailure,
        cause: err,
      })
    })
    throw err
  }
}

function toRecord(plan: WorktreePlan, baseRef: string, links: string[]): WorktreeRecord {
  return {
    team: plan.team,
    name: plan.name,
    slug: plan.slug,
    repo: plan.repo,
    path: plan.path,
    branch: plan.branch,
    baseRef,
    subdir: plan.subdir,
    links,
    createdAt: Date.now(),
  }
}

/** Where the teammate works: the worktree's copy of the directory it was made from, else its top. */
export async function worktreeCwd(w: Pick<WorktreeRecord, 'path' | 'subdir'>): Promise<string> {
  if (!w.subdir) return w.path
  const dir = path.join(w.path, w.subdir)
  return (await fs.stat(dir).catch(() => undefined))?.isDirectory() ? dir : w.path
}

/** Takes away the worktree this call added (links, then the tree, then its branch): nothing in it is anyone's work yet. */
async function undoCreate(plan: WorktreePlan, env: Env): Promise<void> {
  const mine = (await listWorktrees(plan.repo, env)).find((w) => w.path === plan.path && w.branch === plan.branch)
  if (mine) {
    await unlinkIgnoredDirs(plan.path, await linkedDirs(plan.repo, env).catch(() => []))
    await git(plan.repo, ['worktree', 'remove', '--force', plan.path], env)
  }
  await dropUnusedBranch(plan, env)
}

/** Deletes the plan's branch if it still points where it was made and no worktree has it checked out. */
async function dropUnusedBranch(plan: WorktreePlan, env: Env): Promise<void> {
  if ((await listWorktrees(plan.repo, env)).some((w) => w.branch === plan.branch)) return
  await gitRaw(plan.repo, ['update-ref', '-d', `refs/heads/${plan.branch}`, plan.head], env)
}

/** A worktree to remove: its ref, and its record's keys when swarm made it. */
export type RemoveTarget = WorktreeRef & { team?: string; slug?: string }

export interface RemoveWorktreeOptions {
  /** Remove it even when it holds uncommitted changes or unmerged commits: they are destroyed. */
  discard?: boolean
  /** Called with what is about to be destroyed, before anything is (only with `discard`). */
  onDiscard?: (target: RemoveTarget, contents: WorktreeContents) => void
  /** Keep the branch (a batch subtask's deliverable): only uncommitted changes then count as something to lose. */
  keepBranch?: boolean
  env?: Env
}

/** What removeWorktree did. */
export interface RemoveWorktreeResult {
  removed: boolean
  /** Its `swarm/…` branch was deleted too. */
  branchDeleted: boolean
  /** What was in it when it was looked at. */
  contents: WorktreeContents
  /** Why it was kept (or why the branch was), for people. */
  reason?: string
  /** Uncommitted changes or unmerged commits were destroyed (`discard`). */
  discarded: boolean
}

/**
 * Removes a worktree with its `swarm/…` branch when nothing would be lost: no uncommitted change
 * and no commit beyond its base that no other branch holds. Otherwise it is kept and the result
 * says what is in it — unless `discard`, which first names what it destroys (onDiscard). The
 * symlinks swarm made are unlinked first, so their targets are never touched. The main working
 * tree is never removed; a branch that is not swarm's is never deleted.
 */
export async function removeWorktree(target: RemoveTarget, opts: RemoveWorktreeOptions = {}): Promise<RemoveWorktreeResult> {
  const env = opts.env ?? process.env
  if ((await fs.realpath(target.path).catch(() => target.path)) === target.repo) {
    throw new SwarmError('SWARM_MAIN_WORKTREE', `${target.path} is the main working tree of its repository; it is never removed`, {
      exitCode: ExitCode.usage,
    })
  }
  const inspected = await inspectWorktree(target, env)
  if (inspected.tampered) throw tamperedError(target.path, inspected.tampered)
  // With the branch kept, its commits are not lost: only what is uncommitted is.
  const contents = opts.keepBranch && !inspected.repoMissing ? { ...inspected, clean: inspected.uncommitted.length === 0 } : inspected
  if (!contents.clean && !opts.discard) {
    return {
      removed: false,
      branchDeleted: false,
      contents,
      discarded: false,
      reason: `${target.path || '(no worktree)'} (branch ${target.branch}) has ${describeContents(contents)}`,
    }
  }
  if (!contents.clean) opts.onDiscard?.(target, contents)
  if (contents.repoMissing) {
    // The repository itself is gone (--discard): only swarm's record of the worktree is left to remove.
    if (target.team && target.slug) await deleteWorktreeRecord({ team: target.team, slug: target.slug, repo: target.repo }, env)
    return { removed: true, branchDeleted: false, contents, discarded: true }
  }
  if (contents.exists) {
    await unlinkIgnoredDirs(target.path, target.links ?? [])
    try {
      await git(target.repo, ['worktree', 'remove', ...(opts.discard ? ['--force', '--force'] : []), target.path], env)
    } catch (err) {
      // Kept after all (git refused: locked, changed meanwhile…): it gets its links back.
      await linkIgnoredDirs(target.repo, target.path, target.links ?? [], env).catch(() => undefined)
      throw err
    }
  } else if (target.path && (await listWorktrees(target.repo, env)).some((w) => w.path === path.resolve(target.path))) {
    // Its directory is gone: only git's bookkeeping of it is left (this one; never a global prune).
    await git(target.repo, ['worktree', 'remove', '--force', target.path], env)
  }
  let branchDeleted = false
  let reason: string | undefined
  const checkedOut = (await listWorktrees(target.repo, env)).find((w) => w.branch === target.branch)
  if (checkedOut) reason = `kept branch ${target.branch}: it is checked out in ${checkedOut.path}`
  else if (opts.keepBranch) reason = undefined
  else if (contents.branchTip && target.branch.startsWith('swarm/')) {
    // Only if it still points where it was judged: a commit made since keeps it.
    const r = await gitRaw(target.repo, ['update-ref', '-d', `refs/heads/${target.branch}`, contents.branchTip], env)
    branchDeleted = r.code === 0
    if (!branchDeleted) reason = `kept branch ${target.branch}: ${r.stderr.trim().split('\n').at(-1)}`
  }
  if (target.team && target.slug) await deleteWorktreeRecord({ team: target.team, slug: target.slug, repo: target.repo }, env)
  return { removed: true, branchDeleted, contents, discarded: !contents.clean, ...(reason ? { reason } : {}) }
}

/** A worktree whose `.git` no longer points where swarm made it: swarm runs no git there (exit 4). */
function tamperedError(dir: string, problem: string): ConflictError {
  return new ConflictError('SWARM_WORKTREE_TAMPERED', `${dir} is not the worktree swarm made: ${problem}; swarm runs no git there`, {
    hint: 'look at it yourself, then restore its .git file or remove the directory by hand',
  })
}
