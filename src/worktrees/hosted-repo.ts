import fs from 'node:fs/promises'
import path from 'node:path'
import { ConflictError, ExitCode, SwarmError } from '../errors.js'
import { rootDir, validateName } from '../home/paths.js'
import type { Env } from '../home/env.js'
import { ensureDir, pathExists } from '../util/fs.js'
import { git, gitRaw, listWorktrees, resolveCommit } from './git.js'
import { validateSlug } from './slug.js'
import { removeWorktree } from './worktree.js'

/*
 * A host's side of worktrees on another machine (`spawn --host --worktree`, run by
 * `swarm remote worktree-*`): per team and lead repository one bare repository under this
 * machine's state root, `<root>/host-worktrees/<team>/<repo id>.git`, which the lead pushes the
 * member's branch into and fetches it back from; each member's worktree of it beside it,
 * `<root>/host-worktrees/<team>/<slug>`. Nothing here is removed while it holds uncommitted work,
 * and a branch goes only while it still points where the lead fetched it.
 */

const REPO_ID = /^[0-9a-f]{8,64}$/

/** Where a team's hosted repositories and worktrees live on this machine. */
function teamDir(team: string, env: Env): string {
  return path.join(rootDir(env), 'host-worktrees', validateName(team))
}

/** The member's worktree: beside the repository, resolved through symlinks as git lists worktrees. */
async function worktreeDir(team: string, slug: string, env: Env): Promise<string> {
  return path.join(await fs.realpath(teamDir(team, env)), validateSlug(slug))
}

function repoDir(team: string, repoId: string, env: Env): string {
  if (!REPO_ID.test(repoId)) throw new SwarmError('SWARM_BAD_REPO_ID', `not a repository id: ${repoId}`, { exitCode: ExitCode.usage })
  return path.join(teamDir(team, env), `${repoId}.git`)
}

/** What `worktree-open` answers: the bare repository's path, and the branch's commit there when it has one. */
export interface HostedRepo {
  repo: string
  tip?: string
}

/** The team's bare repository for one lead repository, made when missing; the branch's tip there. */
export async function openHostedRepo(team: string, repoId: string, branch: string, env: Env): Promise<HostedRepo> {
  const repo = repoDir(team, repoId, env)
  if (!(await pathExists(path.join(repo, 'HEAD')))) {
    await ensureDir(repo)
    await git(repo, ['init', '--quiet', '--bare'], env)
  }
  const tip = await resolveCommit(repo, `refs/heads/${branch}`, env)
  return { repo, ...(tip ? { tip } : {}) }
}

/** What `worktree-add` answers. */
export interface HostedWorktree {
  path: string
  /** Where the member starts: `subdir` of it when that is a directory, else its top. */
  cwd: string
  /** It was there already on its branch (a member spawned again). */
  reused: boolean
}

/** The member's worktree of `branch` (pushed by the lead already), made or found. */
export async function addHostedWorktree(
  o: { team: string; repoId: string; branch: string; slug: string; subdir: string },
  env: Env,
): Promise<HostedWorktree> {
  const repo = repoDir(o.team, o.repoId, env)
  const wtPath = await worktreeDir(o.team, o.slug, env)
  const listed = (await listWorktrees(repo, env)).find((w) => w.path === wtPath && !w.prunable)
  if (listed && listed.branch !== o.branch)
    throw new ConflictError('SWARM_WORKTREE_PATH_TAKEN', `${wtPath} is already a worktree, of ${listed.branch ?? 'a detached HEAD'}`, {
      hint: 'give this one another name (--worktree <name>)',
    })
  if (!listed) {
    if (await pathExists(wtPath))
      throw new ConflictError('SWARM_WORKTREE_PATH_TAKEN', `${wtPath} exists but is not a git worktree`, {
        hint: 'move it away, or pick another worktree name',
      })
    await git(repo, ['worktree', 'add', '--quiet', wtPath, o.branch], env)
  }
  const sub = path.join(wtPath, o.subdir)
  const cwd = o.subdir && (await fs.stat(sub).catch(() => undefined))?.isDirectory() ? sub : wtPath
  return { path: wtPath, cwd, reused: listed !== undefined }
}

/** What `worktree-remove` answers: removed, or kept with what is uncommitted in it. */
export interface HostedRemoval {
  removed: boolean
  uncommitted: string[]
  /** The branch stayed: it moved since `tip` (a commit made after the fetch). */
  branchKept?: string
}

/**
 * Removes the member's worktree when nothing uncommitted is in it (or `discard`), then its branch
 * while it still points at `tip` (what the lead fetched; without a tip, only with `discard`), then
 * the repository once no worktree or `swarm/` branch is left in it.
 */
export async function removeHostedWorktree(
  o: { team: string; repoId: string; branch: string; slug: string; tip?: string; discard?: boolean },
  env: Env,
): Promise<HostedRemoval> {
  const repo = repoDir(o.team, o.repoId, env)
  if (!(await pathExists(repo))) return { removed: true, uncommitted: [] }
  const wtPath = await worktreeDir(o.team, o.slug, env)
  const r = await removeWorktree({ repo, path: wtPath, branch: o.branch }, { env, keepBranch: true, ...(o.discard ? { discard: true } : {}) })
  if (!r.removed) return { removed: false, uncommitted: r.contents.uncommitted }
  let branchKept: string | undefined
  if (o.tip || o.discard) {
    const d = await gitRaw(repo, ['update-ref', '-d', `refs/heads/${o.branch}`, ...(o.tip && !o.discard ? [o.tip] : [])], env)
    if (d.code !== 0) branchKept = d.stderr.trim().split('\n').at(-1) ?? `exit ${d.code}`
  }
  const left = await gitRaw(repo, ['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/swarm/'], env)
  if ((await listWorktrees(repo, env)).length <= 1 && left.code === 0 && !left.stdout.trim()) {
    await fs.rm(repo, { recursive: true, force: true })
    await fs.rmdir(teamDir(o.team, env)).catch(() => undefined) // only when it is empty
  }
  return { removed: true, uncommitted: r.contents.uncommitted, ...(branchKept ? { branchKept } : {}) }
}
