import { createHash } from 'node:crypto'
import { z } from 'zod'
import { ConflictError, ExitCode, SwarmError, errorMessage } from '../errors.js'
import type { Env } from '../home/env.js'
import { connectionTo, type HostConnection } from '../remote/connection.js'
import { remoteSwarm, shellWord } from '../remote/helper.js'
import { parseHost } from '../remote/host.js'
import { git, mainWorktree, resolveCommit } from './git.js'
import type { WorktreeContents } from './inspect.js'
import { type WorktreeRecord, deleteWorktreeRecord, readWorktreeRecords, writeWorktreeRecord } from './record.js'
import { defaultSlug, validateSlug } from './slug.js'
import { type RemoveWorktreeOptions, type RemoveWorktreeResult, type Worktree, planWorktree, removeWorktree, worktreeBranch } from './worktree.js'

/*
 * A member's worktree on another machine (`swarm spawn --host H --worktree`): the lead's HEAD is
 * pushed as the member's branch `swarm/<team>/<name>` into the team's repository on the host (its
 * helper's `swarm remote worktree-*`, hosted-repo.ts), the member works in a worktree of it there,
 * and its commits come back into the lead's repository by `git fetch` — git's ssh always through
 * the host's one connection (GIT_SSH_COMMAND: the connection's own channel argv). Teardown
 * fetches first: a host's worktree is removed only once what it committed is here.
 */

/** A helper call that runs git there (`worktree add` checks out a whole tree): git.ts's own limit, not a poll's. */
const HOST_GIT_TIMEOUT_MS = 60_000

const HostedRepo = z.object({ repo: z.string(), tip: z.string().optional() })
const HostedWorktree = z.object({ path: z.string(), cwd: z.string(), reused: z.boolean() })
const HostedRemoval = z.object({ removed: z.boolean(), uncommitted: z.array(z.string()), branchKept: z.string().optional() })

/** The lead repository's name on hosts: its path here, hashed (no local path travels). */
function repoId(repo: string): string {
  return createHash('sha256').update(repo).digest('hex').slice(0, 16)
}

/** `swarm remote <args>` on the host; its JSON answer, or a SwarmError with its last line. */
async function helper<T>(conn: HostConnection, args: string[], schema: z.ZodType<T>, env: Env): Promise<T> {
  const r = await conn.run(remoteSwarm(env, ['remote', ...args]), { timeoutMs: HOST_GIT_TIMEOUT_MS })
  if (r.code !== 0)
    throw new SwarmError(
      'SWARM_REMOTE_WORKTREE',
      `${args[0]} on ${conn.host.spec} failed: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`,
      {
        exitCode: r.code === 4 ? ExitCode.conflict : ExitCode.processFailure,
      },
    )
  return schema.parse(JSON.parse(r.stdout))
}

/** git in the lead's repository with the host's repository as its remote: ssh through the connection's master. */
async function gitWithHost(conn: HostConnection, repo: string, args: (url: string) => string[], remoteRepo: string, env: Env): Promise<void> {
  const sshCommand = (await conn.channelArgv()).map(shellWord).join(' ')
  // No port in the URL: the channel argv names it (-p), as it does the config file and the control socket.
  const url = `ssh://${conn.host.destination}${remoteRepo}`
  await git(repo, args(url), { ...env, GIT_SSH_COMMAND: sshCommand, GIT_SSH_VARIANT: 'ssh', GIT_TERMINAL_PROMPT: '0' })
}

export interface CreateHostWorktreeOptions {
  /** Any directory in the lead's repository (the lead's cwd, or `--cwd`). */
  repoDir: string
  team: string
  name: string
  /** `user@host[:port]`. */
  host: string
  slug?: string
  env: Env
}

/**
 * The member's worktree on its host, made (the checks of a local one first: a commit, no
 * uncommitted change, no branch of that name here) or, when this lead repository has one of that
 * name on that host already, found again; recorded here with its host. `cwd`: where it starts there.
 */
export async function createHostWorktree(o: CreateHostWorktreeOptions): Promise<{ worktree: Worktree; cwd: string }> {
  const { env, team, name } = o
  const host = parseHost(o.host)
  const branch = worktreeBranch(team, name)
  const slug = o.slug !== undefined ? validateSlug(o.slug) : defaultSlug(team, name)
  const repo = await mainWorktree(o.repoDir, env)
  const known = (await readWorktreeRecords(team, env)).records.find((r) => r.slug === slug && r.repo === repo)
  if (known && known.host !== host.spec)
    throw new ConflictError(
      'SWARM_WORKTREE_PATH_TAKEN',
      `worktree ${slug} of ${repo} is ${known.host ? `on ${known.host}` : `here, at ${known.path}`}`,
      {
        hint: 'give this one another name (--worktree <name>), or see "swarm worktrees <team>"',
      },
    )
  const { head, subdir } = known ? { head: known.baseRef, subdir: known.subdir } : await planHere(o, slug)
  const conn = connectionTo(host, env)
  const id = repoId(repo)
  const opened = await helper(conn, ['worktree-open', '--team', team, '--repo-id', id, '--branch', branch], HostedRepo, env)
  if (!opened.tip) await gitWithHost(conn, repo, (url) => ['push', '--quiet', url, `${head}:refs/heads/${branch}`], opened.repo, env)
  const added = await helper(
    conn,
    ['worktree-add', '--team', team, '--repo-id', id, '--branch', branch, '--slug', slug, '--subdir', subdir],
    HostedWorktree,
    env,
  )
  const rec: WorktreeRecord = known ?? {
    team,
    name,
    slug,
    repo,
    path: added.path,
    branch,
    baseRef: head,
    subdir,
    links: [],
    createdAt: Date.now(),
    host: host.spec,
  }
  if (!known) await writeWorktreeRecord(rec, env)
  return { worktree: { ...rec, reused: added.reused }, cwd: added.cwd }
}

/** A local worktree's checks (planWorktree): what the host's starts from. A worktree of that name here is not the host's. */
async function planHere(o: CreateHostWorktreeOptions, slug: string): Promise<{ head: string; subdir: string }> {
  const plan = await planWorktree({ repoDir: o.repoDir, team: o.team, name: o.name, slug, env: o.env })
  if (plan.existing)
    throw new ConflictError('SWARM_WORKTREE_PATH_TAKEN', `${plan.path} is ${o.name}'s worktree here already`, {
      hint: `remove it first ("swarm worktrees remove ${o.team} ${slug}"), or give this one another name (--worktree <name>)`,
    })
  return plan
}

/** Enough of a host's worktree to fetch and remove it (its record's fields). */
export interface HostWorktreeRef {
  team: string
  name: string
  slug?: string
  repo: string
  path: string
  branch: string
  baseRef?: string
  host?: string
}

/** What a fetch brought: the branch's commit here before (undefined: it was not here) and now. */
export interface Fetched {
  branch: string
  before?: string
  tip: string
}

/**
 * The member's branch from its host into the lead's repository (fast-forward only: a branch here
 * that went another way is refused by git, named). Nothing on the host changes.
 */
export async function fetchHostWorktree(rec: HostWorktreeRef, env: Env): Promise<Fetched> {
  const conn = connectionTo(hostOf(rec), env)
  const opened = await helper(conn, ['worktree-open', '--team', rec.team, '--repo-id', repoId(rec.repo), '--branch', rec.branch], HostedRepo, env)
  const before = await resolveCommit(rec.repo, `refs/heads/${rec.branch}`, env)
  if (!opened.tip) {
    // Gone there (removed by hand): what is here is all there is.
    if (before) return { branch: rec.branch, before, tip: before }
    throw new SwarmError('SWARM_REMOTE_WORKTREE', `branch ${rec.branch} is on neither ${rec.host} nor here`, { exitCode: ExitCode.notFound })
  }
  await gitWithHost(
    conn,
    rec.repo,
    (url) => ['fetch', '--quiet', '--no-tags', url, `refs/heads/${rec.branch}:refs/heads/${rec.branch}`],
    opened.repo,
    env,
  )
  return { branch: rec.branch, ...(before ? { before } : {}), tip: opened.tip }
}

/**
 * Tears a host's worktree down without losing work: its branch is fetched here first (a fetch
 * that fails keeps everything, naming the command that brings it), then the worktree goes on the
 * host unless it holds uncommitted changes, then its branch there — and the branch, here now, is
 * judged as any branch of a removed worktree (kept while it holds unmerged commits). `discard`
 * skips the fetch and destroys what is there, as for a local worktree.
 */
export async function removeHostWorktree(
  w: HostWorktreeRef & { contents: WorktreeContents },
  opts: RemoveWorktreeOptions & { env: Env },
): Promise<RemoveWorktreeResult> {
  const { env } = opts
  const kept = (reason: string, contents = w.contents): RemoveWorktreeResult => ({
    removed: false,
    branchDeleted: false,
    contents,
    discarded: false,
    reason,
  })
  let fetched: Fetched | undefined
  if (!opts.discard) {
    try {
      fetched = await fetchHostWorktree(w, env)
    } catch (err) {
      return kept(
        `branch ${w.branch} on ${w.host} was not brought back (${errorMessage(err)}): run "swarm worktrees fetch ${w.team} ${w.name}", or remove it with --discard`,
      )
    }
  }
  const conn = connectionTo(hostOf(w), env)
  const slug = validateSlug(w.slug ?? defaultSlug(w.team, w.name))
  const removal = await helper(
    conn,
    [
      'worktree-remove',
      '--team',
      w.team,
      '--repo-id',
      repoId(w.repo),
      '--branch',
      w.branch,
      '--slug',
      slug,
      ...(fetched ? ['--tip', fetched.tip] : []),
      ...(opts.discard ? ['--discard'] : []),
    ],
    HostedRemoval,
    env,
  )
  if (!removal.removed) {
    const contents = { ...w.contents, uncommitted: removal.uncommitted, clean: false }
    return kept(`${w.host}:${w.path} (branch ${w.branch}) has uncommitted changes: commit them there, or remove it with --discard`, contents)
  }
  if (removal.uncommitted.length) opts.onDiscard?.(w, { ...w.contents, uncommitted: removal.uncommitted, clean: false })
  await deleteWorktreeRecord({ team: w.team, slug, repo: w.repo }, env)
  // The branch now lives here only; a branch only (path ''), judged from the worktree's base.
  const here = await removeWorktree({ repo: w.repo, path: '', branch: w.branch, ...(w.baseRef !== undefined && { baseRef: w.baseRef }) }, opts)
  const branchKept = removal.branchKept ? `kept branch ${w.branch} on ${w.host}: ${removal.branchKept}` : undefined
  // A branch kept here for its unmerged commits is the work brought back, not a problem: printTeardown names it.
  return {
    removed: true,
    branchDeleted: here.branchDeleted,
    contents: here.contents,
    discarded: here.discarded || removal.uncommitted.length > 0,
    ...(branchKept && { reason: branchKept }),
  }
}

function hostOf(rec: HostWorktreeRef): string {
  if (!rec.host) throw new SwarmError('SWARM_NO_HOST', `worktree ${rec.path} is not on a host`, { exitCode: ExitCode.usage })
  return rec.host
}
