import fs from 'node:fs/promises'
import path from 'node:path'
import { ExitCode, SwarmError, UsageError } from '../errors.js'
import { type CommandResult, runCommand } from '../process/launch.js'
import { LIST_FILTERS_ARGS, filterOverrides, needsFilterList, safeGitArgv } from './git-safety.js'
import type { Env } from '../home/env.js'

/** `git worktree add` checks out a whole tree, which takes longer than a helper command's default. */
const GIT_TIMEOUT_MS = 60_000

/**
 * Runs git with the repository's programs turned off (see git-safety); exit 127 (not installed)
 * is a SwarmError, any other exit code is the caller's to read.
 */
export async function gitRaw(cwd: string, args: string[], env: Env): Promise<CommandResult> {
  const overrides = needsFilterList(args) ? filterOverrides((await runGit(cwd, safeGitArgv(LIST_FILTERS_ARGS), env)).stdout) : []
  return runGit(cwd, safeGitArgv(args, overrides), env)
}

async function runGit(cwd: string, argv: string[], env: Env): Promise<CommandResult> {
  const r = await runCommand('git', argv, { cwd, env, timeoutMs: GIT_TIMEOUT_MS })
  if (r.code === 127)
    throw new SwarmError('SWARM_GIT_MISSING', 'git is not installed (or not on PATH)', {
      exitCode: ExitCode.usage,
      hint: 'install git, or spawn without --worktree',
    })
  return r
}

/** Runs git and returns its stdout; a non-zero exit is a SwarmError quoting git's message. */
export async function git(cwd: string, args: string[], env: Env): Promise<string> {
  const r = await gitRaw(cwd, args, env)
  if (r.code !== 0) {
    // git prints progress first ("Preparing worktree …"): the line that says what failed starts with fatal: or error:.
    const lines = r.stderr.trim().split('\n').filter(Boolean)
    const detail = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.at(-1) ?? `exit code ${r.code}`
    throw new SwarmError('SWARM_GIT_FAILED', `git ${args.slice(0, 2).join(' ')} failed in ${cwd}: ${detail}`, { exitCode: ExitCode.processFailure })
  }
  return r.stdout
}

/**
 * The top of the MAIN working tree of the repository containing `dir`: from inside a linked
 * worktree, `--show-toplevel` names the linked one, and worktrees must not nest.
 */
export async function mainWorktree(dir: string, env: Env): Promise<string> {
  const abs = path.resolve(dir)
  const stat = await fs.stat(abs).catch(() => undefined)
  if (!stat?.isDirectory()) throw new UsageError(`${abs} is not a directory`)
  const top = await gitRaw(abs, ['rev-parse', '--show-toplevel'], env)
  if (top.code !== 0) {
    throw new SwarmError('SWARM_NOT_A_GIT_REPO', `${abs} is not inside a git repository, so it cannot have a worktree`, {
      exitCode: ExitCode.usage,
      hint: 'run from a git repository (or pass --cwd inside one), or spawn without --worktree',
    })
  }
  // git lists the main working tree first; a bare repository has none, so worktrees go beside the current one.
  const first = (await listWorktrees(abs, env))[0]
  return first && !first.bare ? first.path : fs.realpath(top.stdout.trim())
}

/** The top of the working tree (main or linked) that contains `dir`: where its HEAD and changes are. */
export async function checkoutTop(dir: string, env: Env): Promise<string> {
  return fs.realpath((await git(path.resolve(dir), ['rev-parse', '--show-toplevel'], env)).trim())
}

/** One entry of `git worktree list --porcelain`. */
export interface ListedWorktree {
  /** Resolved through symlinks, for comparison. */
  path: string
  branch?: string
  head?: string
  /** git's `prunable`: the directory is gone. */
  prunable: boolean
  bare: boolean
}

export async function listWorktrees(top: string, env: Env): Promise<ListedWorktree[]> {
  const out = await git(top, ['worktree', 'list', '--porcelain'], env)
  const result: ListedWorktree[] = []
  for (const block of out.split(/\n\n+/)) {
    const lines = block.split('\n')
    const field = (name: string) => lines.find((l) => l === name || l.startsWith(`${name} `))?.slice(name.length + 1)
    const wt = field('worktree')
    if (!wt) continue
    const branch = field('branch')?.replace(/^refs\/heads\//, '')
    const head = field('HEAD')
    const real = await fs.realpath(wt).catch(() => path.resolve(wt))
    result.push({
      path: real,
      ...(branch ? { branch } : {}),
      ...(head ? { head } : {}),
      prunable: field('prunable') !== undefined,
      bare: field('bare') !== undefined,
    })
  }
  return result
}

/** The commit `ref` names, or undefined. */
export async function resolveCommit(cwd: string, ref: string, env: Env): Promise<string | undefined> {
  const r = await gitRaw(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], env)
  return r.code === 0 ? r.stdout.trim() : undefined
}

export async function branchExists(cwd: string, branch: string, env: Env): Promise<boolean> {
  return (await gitRaw(cwd, ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], env)).code === 0
}
