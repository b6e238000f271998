import type { Command } from 'commander'
import { NotFoundError, UsageError } from '../errors.js'
import { readTeam } from '../teams/team-store.js'
import { describeContents, describeLeftovers, type WorktreeContents } from '../worktrees/inspect.js'
import { type TeamWorktree, type TeardownReport, summarizeWorktree } from '../worktrees/team-worktrees.js'
import type { RemoveTarget } from '../worktrees/worktree.js'
import { colors, printJson, println, table } from '../terminal/output.js'

/** `swarm worktrees …` */
export function registerWorktreeCommands(program: Command): void {
  const wt = program.command('worktrees').description("the teams' git worktrees: list them, prune the clean ones, remove one")
  wt.command('list <team>', { isDefault: true })
    .description('every worktree of the team, clean or not (also ones left by earlier teams of that name)')
    .option('--json', 'print JSON')
    .action((team: string, opts: { json?: boolean }) => worktreesList(team, opts))
  wt.command('fetch <team> [name]')
    .description(
      "bring the branches of the team's worktrees on other hosts (or the one of <name>) into the lead's repository, through the connection",
    )
    .option('--json', 'print JSON')
    .action((team: string, name: string | undefined, opts: { json?: boolean }) => worktreesFetch(team, name, opts))
  wt.command('prune [team]')
    .description('remove the worktrees (of the team, or of every team) that hold nothing to lose')
    .option('--json', 'print JSON')
    .action((team: string | undefined, opts: { json?: boolean }) => worktreesPrune(team, opts))
  wt.command('remove <team> <name>')
    .description('remove one worktree (by teammate name, worktree name or path) and its branch')
    .option('--discard', 'even with uncommitted changes or unmerged commits: they are destroyed (and named first)')
    .option('--json', 'print JSON')
    .action((team: string, name: string, opts: { discard?: boolean; json?: boolean }) => worktreesRemove(team, name, opts))
}

/**
 * What the commands need of the team, from one read of its config (none when it is gone): where to
 * look for `swarm/<team>/` branches (its cwds and the current directory), and who works where.
 */
async function teamContext(team: string): Promise<{ repoDirs: string[]; members: Map<string, string> }> {
  const [{ localRepoDirs, worktreeUsersOf }, config] = await Promise.all([
    import('../worktrees/team-worktrees.js'),
    readTeam(team).catch(() => undefined),
  ])
  const list = config?.members ?? []
  return { repoDirs: [process.cwd(), ...localRepoDirs(list)], members: worktreeUsersOf(list) }
}

export async function worktreesList(team: string, opts: { json?: boolean }): Promise<void> {
  const { listTeamWorktrees } = await import('../worktrees/team-worktrees.js')
  const { repoDirs, members } = await teamContext(team)
  const listing = await listTeamWorktrees(team, { env: process.env, repoDirs })
  if (opts.json) printJson({ team, worktrees: listing.worktrees.map((w) => worktreeJson(w, members.get(w.path))), problems: listing.problems })
  else if (!listing.worktrees.length) println(`team ${team} has no worktrees`)
  else {
    const rows = [['NAME', 'BRANCH', 'STATE', 'PATH']]
    for (const w of listing.worktrees)
      rows.push([
        w.name + (members.has(w.path) ? '' : ' (no member)'),
        w.branch,
        describeContents(w.contents),
        w.host ? `${w.host}:${w.path}` : w.path || '(no worktree: branch only)',
      ])
    println(table(rows))
  }
  reportProblems(listing.problems)
}

export async function worktreesFetch(team: string, name: string | undefined, opts: { json?: boolean }): Promise<void> {
  const { fetchTeamWorktrees } = await import('../worktrees/team-worktrees.js')
  const report = await fetchTeamWorktrees(team, { env: process.env, ...(name !== undefined && { name }) })
  if (opts.json) printJson({ team, ...report })
  else if (!report.fetched.length && !report.problems.length)
    println(`team ${team} has no worktree on another host${name === undefined ? '' : ` named ${JSON.stringify(name)}`}`)
  for (const f of opts.json ? [] : report.fetched) {
    const moved = f.before === f.tip ? 'up to date' : `${f.before ? f.before.slice(0, 7) : 'new'}..${f.tip.slice(0, 7)}`
    println(`fetched ${f.branch} from ${f.host} into ${f.repo} (${moved})`)
  }
  reportProblems(report.problems)
}

export async function worktreesPrune(team: string | undefined, opts: { json?: boolean }): Promise<void> {
  const { pruneWorktrees } = await import('../worktrees/team-worktrees.js')
  const report = await pruneWorktrees({
    env: process.env,
    ...(team ? { team, repoDirs: (await teamContext(team)).repoDirs } : { repoDirs: [process.cwd()] }),
  })
  if (opts.json) printJson(teardownJson(report))
  else {
    println(
      `removed ${report.removed.length} clean worktree(s)${report.removed.length ? `: ${report.removed.map((w) => w.path || w.branch).join(', ')}` : ''}`,
    )
    printTeardown(report, { removed: false })
  }
  reportProblems(report.problems)
}

export async function worktreesRemove(team: string, name: string, opts: { discard?: boolean; json?: boolean }): Promise<void> {
  const { listTeamWorktrees, teardownWorktrees } = await import('../worktrees/team-worktrees.js')
  const { repoDirs, members } = await teamContext(team)
  const listing = await listTeamWorktrees(team, { env: process.env, repoDirs })
  const matches = listing.worktrees.filter((w) => w.name === name || w.slug === name || (w.path && w.path === name))
  if (!matches.length)
    throw new NotFoundError(`team ${team} has no worktree named ${JSON.stringify(name)}`, { hint: `see "swarm worktrees ${team}"` })
  if (matches.length > 1)
    throw new UsageError(`${JSON.stringify(name)} names ${matches.length} worktrees: ${matches.map((w) => w.path || w.branch).join(', ')}`, {
      hint: 'give the path instead',
    })
  const inUse = members.get(matches[0].path)
  if (inUse)
    throw new UsageError(`${matches[0].path} is ${inUse}'s working directory`, {
      hint: `remove the teammate with "swarm kill ${team} ${inUse} --remove"`,
    })
  const report = await teardownWorktrees(matches, { env: process.env, discard: Boolean(opts.discard), onDiscard: announceDiscard })
  if (opts.json) printJson(teardownJson(report))
  else printTeardown(report)
  reportProblems(report.problems)
  if (report.kept.length) process.exitCode = 4
}

/** `--discard` names what it destroys before it does (on stderr, so --json output stays JSON). */
export function announceDiscard(target: RemoveTarget, contents: WorktreeContents): void {
  process.stderr.write(`discarding ${target.path || target.branch} (branch ${target.branch}): ${describeContents(contents)}\n`)
}

/** The lines a teardown prints: what was removed and what was kept, with how to go on. */
export function printTeardown(report: TeardownReport, show: { removed?: boolean } = {}): void {
  for (const w of report.removed) {
    const leftovers = describeLeftovers(w.contents)
    if (show.removed !== false)
      println(w.path ? `removed worktree ${w.path}${w.branchDeleted ? ` and branch ${w.branch}` : ''}` : `removed branch ${w.branch}`)
    if (leftovers) println(`  ${leftovers}`)
    // A host's worktree: its branch was fetched here first, and stays while it holds work.
    if (w.host && !w.branchDeleted && w.contents.unmergedCount)
      println(
        `  kept its branch ${w.branch} in ${w.repo}: ${w.contents.unmergedCount} unmerged commit(s); merge it, or delete it with "git branch -D ${w.branch}"`,
      )
  }
  for (const w of report.inUse) println(`left worktree ${w.path}: ${w.member} works in it`)
  for (const w of report.kept) {
    println(
      colors.yellow(
        `kept worktree ${w.path || '(none: branch only)'} (branch ${w.branch}): ${w.contents.clean || w.contents.tampered || w.host ? w.reason : describeContents(w.contents)}`,
      ),
    )
    if (w.contents.tampered) println('  swarm runs no git there: look at it, then restore its .git file or remove the directory by hand')
    else println(`  see "swarm worktrees ${w.team}"; destroy it with "swarm worktrees remove ${w.team} ${w.slug ?? w.name} --discard"`)
  }
}

export function teardownJson(report: TeardownReport): Record<string, unknown> {
  return {
    removed: report.removed.map((w) => ({ ...worktreeJson(w), branchDeleted: w.branchDeleted })),
    inUse: report.inUse.map((w) => worktreeJson(w, w.member)),
    kept: report.kept.map((w) => ({ ...worktreeJson(w), reason: w.reason })),
    discarded: report.discarded.map((w) => worktreeJson(w)),
    problems: report.problems,
  }
}

export function worktreeJson(w: TeamWorktree, member?: string): Record<string, unknown> {
  return { ...summarizeWorktree(w), member: member ?? null }
}

function reportProblems(problems: string[]): void {
  for (const p of problems) process.stderr.write(`swarm: ${p}\n`)
  if (problems.length && !process.exitCode) process.exitCode = 5
}
