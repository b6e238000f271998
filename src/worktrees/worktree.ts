import fs from 'node:fs/promises'
import path from 'node:path'
import { ConflictError, ExitCode, SwarmError, UsageError } from '../errors.js'
import { validateName } from '../teams/paths.js'
import { pathExists } from '../util/fs.js'
import { type CommandResult, runCommand } from '../util/process.js'

type Env = NodeJS.ProcessEnv

/** `git worktree add` checks out a whole tree, which takes longer than a helper command's default. */
const GIT_TIMEOUT_MS = 60_000

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
  /** The teammate (or subagent) name; part of the path and the branch. */
  name: string
  /** Environment for git (default process.env). */
  env?: Env
}

/** A teammate's worktree. */
export interface Worktree {
  /** Absolute path: `<top>/.claude/worktrees/<team>-<name>`. */
  path: string
  branch: string
  /** The commit the repository's HEAD was at when the worktree was made (or reused). */
  baseRef: string
  /** True when the worktree existed already and was reused as it is. */
  reused: boolean
}

/**
 * Gives `name` a git worktree of its own on branch `swarm/<team>/<name>`, made from HEAD of the
 * repository that contains `repoDir`. An existing registered worktree at that path is reused; an
 * existing branch is checked out rather than created. Not a repository → SwarmError (exit 2).
 */
export async function createWorktree(o: CreateWorktreeOptions): Promise<Worktree> {
  const env = o.env ?? process.env
  const branch = worktreeBranch(o.team, o.name)
  const top = await mainWorktree(o.repoDir, env)
  const wtPath = path.join(top, WORKTREES_DIR, `${o.team}-${o.name}`)
  const head = await gitRaw(top, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], env)
  if (head.code !== 0) {
    throw new SwarmError('SWARM_GIT_NO_COMMIT', `the repository at ${top} has no commit yet, so there is nothing to check out in a worktree`, {
      exitCode: ExitCode.usage,
      hint: 'make a first commit, or spawn without --worktree',
    })
  }
  const baseRef = head.stdout.trim()
  const registered = (await listWorktrees(top, env)).find((w) => w.path === wtPath)
  if (registered && (await pathExists(wtPath))) return { path: wtPath, branch: registered.branch ?? branch, baseRef, reused: true }
  if (registered) await git(top, ['worktree', 'prune'], env) // its directory was deleted by hand
  if (await pathExists(wtPath)) {
    throw new ConflictError('SWARM_WORKTREE_PATH_TAKEN', `${wtPath} exists but is not a git worktree`, { hint: 'move it away, or pick another teammate name' })
  }
  await excludeWorktreesDir(top, env)
  const branchExists = (await gitRaw(top, ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], env)).code === 0
  await git(top, branchExists ? ['worktree', 'add', wtPath, branch] : ['worktree', 'add', '-b', branch, wtPath, 'HEAD'], env)
  return { path: wtPath, branch, baseRef, reused: false }
}

export interface RemoveWorktreeOptions {
  /** Remove it even with uncommitted changes (they are lost). */
  force?: boolean
  env?: Env
}

/** What removeWorktree did. `reason` says why something was kept. */
export interface RemoveWorktreeResult {
  removed: boolean
  reason?: string
  /** The branch the worktree had checked out (none when detached). */
  branch?: string
  /** False when the branch was kept because it has commits not merged into the main tree's HEAD. */
  branchDeleted?: boolean
}

/**
 * Removes a worktree made by createWorktree when it is clean (or `force`); a dirty one is kept
 * and reported. Its `swarm/…` branch is then deleted only if fully merged (`git branch -d`),
 * else kept and reported — committed work is never thrown away.
 */
export async function removeWorktree(wtPath: string, opts: RemoveWorktreeOptions = {}): Promise<RemoveWorktreeResult> {
  const env = opts.env ?? process.env
  if (!(await pathExists(wtPath))) return { removed: false, reason: `${wtPath} does not exist` }
  const real = await fs.realpath(wtPath)
  const top = await gitRaw(real, ['rev-parse', '--show-toplevel'], env)
  if (top.code !== 0 || path.resolve(top.stdout.trim()) !== real) return { removed: false, reason: `${wtPath} is not the top of a git worktree` }
  const main = await mainWorktree(real, env)
  if (main === real) return { removed: false, reason: `${wtPath} is the main working tree of its repository` }
  const symbolic = await gitRaw(real, ['symbolic-ref', '--quiet', '--short', 'HEAD'], env)
  const branch = symbolic.code === 0 ? symbolic.stdout.trim() : undefined
  if (!opts.force) {
    const status = await git(real, ['status', '--porcelain'], env)
    if (status.trim()) return { removed: false, reason: `${wtPath} has uncommitted changes`, ...(branch ? { branch } : {}) }
  }
  await git(main, ['worktree', 'remove', ...(opts.force ? ['--force', '--force'] : []), real], env)
  // Only our own branches are deleted; a branch the user checked out there is theirs.
  if (!branch?.startsWith('swarm/')) return { removed: true, ...(branch ? { branch } : {}) }
  const deleted = await gitRaw(main, ['branch', '-d', branch], env)
  if (deleted.code === 0) return { removed: true, branch, branchDeleted: true }
  return { removed: true, branch, branchDeleted: false, reason: `branch ${branch} has commits that are not merged; kept it` }
}

/**
 * The top of the MAIN working tree of the repository containing `dir`: from inside a linked
 * worktree, `--show-toplevel` names the linked one, and worktrees must not nest.
 */
export async function mainWorktree(dir: string, env: Env = process.env): Promise<string> {
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
  const common = (await git(abs, ['rev-parse', '--path-format=absolute', '--git-common-dir'], env)).trim()
  // A bare repository or a submodule has no `.git` directory next to its main tree: use the top.
  const main = path.basename(common) === '.git' ? path.dirname(common) : top.stdout.trim()
  return fs.realpath(main)
}

interface ListedWorktree {
  path: string
  branch?: string
}

/** `git worktree list --porcelain`, paths resolved through symlinks (for comparison). */
async function listWorktrees(top: string, env: Env): Promise<ListedWorktree[]> {
  const out = await git(top, ['worktree', 'list', '--porcelain'], env)
  const result: ListedWorktree[] = []
  for (const block of out.split(/\n\n+/)) {
    const lines = block.split('\n')
    const wt = lines.find((l) => l.startsWith('worktree '))?.slice('worktree '.length)
    if (!wt) continue
    const branch = lines.find((l) => l.startsWith('branch refs/heads/'))?.slice('branch refs/heads/'.length)
    const real = await fs.realpath(wt).catch(() => path.resolve(wt))
    result.push({ path: real, ...(branch ? { branch } : {}) })
  }
  return result
}

/** Keeps the nested worktrees out of the main tree's `git status` (local to this clone, never committed). */
async function excludeWorktreesDir(top: string, env: Env): Promise<void> {
  const infoDir = (await git(top, ['rev-parse', '--path-format=absolute', '--git-path', 'info'], env)).trim()
  const file = path.join(infoDir, 'exclude')
  const line = '/.claude/worktrees/'
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return ''
    throw err
  })
  if (text.split('\n').includes(line)) return
  await fs.mkdir(infoDir, { recursive: true })
  await fs.appendFile(file, `${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`)
}

async function gitRaw(cwd: string, args: string[], env: Env): Promise<CommandResult> {
  const r = await runCommand('git', args, { cwd, env, timeoutMs: GIT_TIMEOUT_MS })
  if (r.code === 127) throw new SwarmError('SWARM_GIT_MISSING', 'git is not installed (or not on PATH)', { exitCode: ExitCode.usage, hint: 'install git, or spawn without --worktree' })
  return r
}

/** Runs git and returns its stdout; a non-zero exit is a SwarmError quoting git's message. */
async function git(cwd: string, args: string[], env: Env): Promise<string> {
  const r = await gitRaw(cwd, args, env)
  if (r.code !== 0) {
    const detail = r.stderr.trim().split('\n').find(Boolean) ?? `exit code ${r.code}`
    throw new SwarmError('SWARM_GIT_FAILED', `git ${args.slice(0, 2).join(' ')} failed in ${cwd}: ${detail}`, { exitCode: ExitCode.processFailure })
  }
  return r.stdout
}
