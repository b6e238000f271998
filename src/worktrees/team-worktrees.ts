import { errorMessage } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam } from '../teams/team-store.js'
import type { TeamMember } from '../teams/types.js'
import { gitRaw, listWorktrees, mainWorktree } from './git.js'
import { type WorktreeContents, inspectWorktree } from './inspect.js'
import { readWorktreeRecords, teamsWithWorktreeRecords } from './record.js'
import { type RemoveWorktreeOptions, type RemoveTarget, removeWorktree } from './worktree.js'
import { type Fetched, fetchHostWorktree, removeHostWorktree } from './host-worktree.js'
import type { Env } from '../home/env.js'

/** One worktree (or a branch left without one) of a team, and what is in it. */
export interface TeamWorktree extends RemoveTarget {
  team: string
  /** The machine it lives on (its path is one there); its contents are then its branch's here, last fetched. */
  host?: string
  /** The teammate it was made for (from the record, else the branch name). */
  name: string
  /** Swarm has a record of it (else it was found by its `swarm/<team>/` branch). */
  recorded: boolean
  contents: WorktreeContents
}

export interface TeamWorktreeListing {
  worktrees: TeamWorktree[]
  /** Records that could not be read, and repositories that could not be looked at. */
  problems: string[]
}

/**
 * Every worktree of `team`, clean or not, also those left by earlier teams of the same name: the
 * records swarm wrote, and any other `swarm/<team>/…` worktree or branch in the repositories
 * they name plus `repoDirs` (the team's cwds; the current directory).
 */
export async function listTeamWorktrees(team: string, o: { env: Env; repoDirs?: string[] }): Promise<TeamWorktreeListing> {
  const { records, problems } = await readWorktreeRecords(team, o.env)
  const found = new Map<string, TeamWorktree>()
  const repos = new Set(records.map((r) => r.repo))
  for (const dir of o.repoDirs ?? []) {
    const repo = await mainWorktree(dir, o.env).catch(() => undefined)
    if (repo) repos.add(repo)
  }
  for (const r of records) {
    try {
      // A host's worktree is never looked at here: what its branch holds here (since the last fetch) is.
      const contents = r.host ? { ...(await inspectWorktree({ ...r, path: '' }, o.env)), exists: true } : await inspectWorktree(r, o.env)
      found.set(`${r.repo}\0${r.branch}`, { ...r, recorded: true, contents })
    } catch (err) {
      problems.push(`${r.path}: ${errorMessage(err)}`)
    }
  }
  const prefix = `swarm/${team}/`
  for (const repo of repos) {
    try {
      const listed = await listWorktrees(repo, o.env)
      const refs = await gitRaw(repo, ['for-each-ref', '--format=%(refname:short)', `refs/heads/${prefix}`], o.env)
      const branches = refs.code === 0 ? refs.stdout.split('\n').filter(Boolean) : []
      for (const branch of new Set([...branches, ...listed.flatMap((w) => (w.branch?.startsWith(prefix) ? [w.branch] : []))])) {
        if (found.has(`${repo}\0${branch}`)) continue
        const where = listed.find((w) => w.branch === branch)
        const ref = { repo, branch, path: where?.path ?? '' }
        found.set(`${repo}\0${branch}`, {
          ...ref,
          team,
          name: branch.slice(prefix.length),
          recorded: false,
          contents: await inspectWorktree(ref, o.env),
        })
      }
    } catch (err) {
      problems.push(`${repo}: ${errorMessage(err)}`)
    }
  }
  return { worktrees: [...found.values()].sort((a, b) => a.name.localeCompare(b.name) || a.path.localeCompare(b.path)), problems }
}

/** What a teardown did: removed, kept (with why), and problems. */
export interface TeardownReport {
  /** Removed; `branchDeleted` false when its branch had to stay (checked out elsewhere, moved meanwhile). */
  removed: Array<TeamWorktree & { branchDeleted: boolean }>
  /** Kept because removing them would lose work (or git refused); `reason` says which. */
  kept: Array<TeamWorktree & { reason: string }>
  /** Removed although they held work (`discard`). */
  discarded: TeamWorktree[]
  /** Left alone because a member of the team works in them (prune). */
  inUse: Array<TeamWorktree & { member: string }>
  problems: string[]
}

/**
 * Removes each worktree that holds nothing to lose, with its branch; keeps (and reports) the rest,
 * unless `discard`. Used by team delete, teammate removal and `swarm worktrees prune|remove`.
 */
export async function teardownWorktrees(worktrees: TeamWorktree[], opts: RemoveWorktreeOptions & { env: Env }): Promise<TeardownReport> {
  const report: TeardownReport = { removed: [], kept: [], discarded: [], inUse: [], problems: [] }
  for (const w of worktrees) {
    try {
      const r = w.host ? await removeHostWorktree(w, opts) : await removeWorktree(w, opts)
      const now = { ...w, contents: r.contents }
      if (!r.removed) report.kept.push({ ...now, reason: r.reason ?? 'kept' })
      else {
        report.removed.push({ ...now, branchDeleted: r.branchDeleted })
        if (r.discarded) report.discarded.push(now)
        if (r.reason) report.problems.push(r.reason)
      }
    } catch (err) {
      report.kept.push({ ...w, reason: `could not remove ${w.path || w.branch}: ${errorMessage(err)}` })
    }
  }
  return report
}

/** `swarm worktrees fetch`: each host's worktree of the team (or the one of `name`) brings its branch into the lead's repository. */
export async function fetchTeamWorktrees(
  team: string,
  o: { env: Env; name?: string },
): Promise<{ fetched: Array<Fetched & { name: string; host: string; repo: string }>; problems: string[] }> {
  const { records, problems } = await readWorktreeRecords(team, o.env)
  const hosted = records.filter((r) => r.host && (o.name === undefined || r.name === o.name || r.slug === o.name))
  const fetched: Array<Fetched & { name: string; host: string; repo: string }> = []
  for (const r of hosted) {
    try {
      fetched.push({ ...(await fetchHostWorktree(r, o.env)), name: r.name, host: r.host!, repo: r.repo })
    } catch (err) {
      problems.push(`${r.branch} from ${r.host}: ${errorMessage(err)}`)
    }
  }
  return { fetched, problems }
}

/**
 * The worktrees of `members` (by their worktreePath) among the team's: what a teammate's removal
 * tears down. Without members: all of the team's (team delete).
 */
export async function teamWorktreesOf(team: string, o: { env: Env; members?: TeamMember[]; repoDirs?: string[] }): Promise<TeamWorktreeListing> {
  const listing = await listTeamWorktrees(team, o)
  if (!o.members) return listing
  const paths = new Set(o.members.flatMap((m) => (m.worktreePath ? [m.worktreePath] : [])))
  const names = new Set(o.members.map((m) => m.name))
  return { ...listing, worktrees: listing.worktrees.filter((w) => paths.has(w.path) || (!w.recorded && names.has(w.name))) }
}

/**
 * `swarm worktrees prune [team]`: removes every clean worktree of the team (or of every team with
 * records) — except those a member of the team works in: clean just means nothing done yet.
 */
export async function pruneWorktrees(o: { env: Env; team?: string; repoDirs?: string[] }): Promise<TeardownReport> {
  const teams = o.team ? [o.team] : await teamsWithWorktreeRecords(o.env)
  const total: TeardownReport = { removed: [], kept: [], discarded: [], inUse: [], problems: [] }
  for (const team of teams) {
    const listing = await listTeamWorktrees(team, o)
    const users = await worktreeUsers(team, o.env)
    const free = listing.worktrees.filter((w) => !users.has(w.path))
    total.inUse.push(...listing.worktrees.flatMap((w) => (users.has(w.path) ? [{ ...w, member: users.get(w.path)! }] : [])))
    const r = await teardownWorktrees(free, { env: o.env })
    total.removed.push(...r.removed)
    total.kept.push(...r.kept)
    total.problems.push(...listing.problems, ...r.problems)
  }
  return total
}

/** Where to look for a team's `swarm/<team>/` branches: its members' cwds here (a host member's is a path on its host). */
export function localRepoDirs(members: TeamMember[]): string[] {
  return members.flatMap((m) => (m.cwd && !m.host ? [m.cwd] : []))
}

/** Worktree path → the member of `team` whose worktree (or cwd) it is. A team that cannot be read counts as none. */
export async function worktreeUsers(team: string, env: Env): Promise<Map<string, string>> {
  const config = await readTeam(team, env).catch(() => undefined)
  return worktreeUsersOf(config?.members ?? [])
}

/** Worktree path (or cwd) → the teammate working there; the lead is nobody's user. */
export function worktreeUsersOf(members: TeamMember[]): Map<string, string> {
  const users = new Map<string, string>()
  for (const m of members) {
    if (m.name === LEAD_NAME) continue
    if (m.worktreePath) users.set(m.worktreePath, m.name)
    if (m.cwd) users.set(m.cwd, m.name)
  }
  return users
}

/** A worktree as `--json` output shows it (worktrees, status, delete, kill --remove). */
export interface WorktreeSummary {
  team: string
  name: string
  slug?: string
  /** The machine it lives on: `path` is a path there. */
  host?: string
  /** null: no worktree left, only its branch. */
  path: string | null
  branch: string
  repo: string
  baseRef?: string
  recorded: boolean
  exists: boolean
  clean: boolean
  uncommitted: Array<{ status: string; path: string }>
  /** Ignored files (build output, .env…): not work by git's measure, but deleted with the worktree. */
  ignored: string[]
  /** Another branch checked out in it (never deleted by swarm). */
  otherBranch?: string
  repoMissing?: boolean
  /** Why swarm refuses to run git in it (its .git was changed). */
  tampered?: string
  unmergedCommits: Array<{ sha: string; subject: string }>
  unmergedCount: number
}

export function summarizeWorktree(w: TeamWorktree): WorktreeSummary {
  const c = w.contents
  return {
    team: w.team,
    name: w.name,
    ...(w.slug ? { slug: w.slug } : {}),
    ...(w.host ? { host: w.host } : {}),
    path: w.path || null,
    branch: w.branch,
    repo: w.repo,
    ...(w.baseRef ? { baseRef: w.baseRef } : {}),
    recorded: w.recorded,
    exists: c.exists,
    clean: c.clean,
    uncommitted: c.uncommitted.map((l) => ({ status: l.slice(0, 2), path: l.slice(3) })),
    ignored: c.ignored,
    ...(c.otherBranch ? { otherBranch: c.otherBranch } : {}),
    ...(c.repoMissing ? { repoMissing: true } : {}),
    ...(c.tampered ? { tampered: c.tampered } : {}),
    unmergedCommits: c.unmerged,
    unmergedCount: c.unmergedCount,
  }
}
