import fs from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { backendChoices, parseBackendChoice, showsHostedTeammates } from '../backends/registry.js'
import { agentKindsHelp, builtInAdapter } from '../adapters/registry.js'
import { runLeader } from '../leader/leader.js'
import { deleteTeamFully, refusePaneModeWithoutPanes, startTeam } from '../leader/lifecycle.js'
import { type ResumeReport, resumeTeam } from '../leader/resume.js'
import { selectBackend, systemDetectInputs } from '../backends/detect.js'
import type { ReapedProcess } from '../supervisor/reap-team.js'
import { ensureTeamKeys } from '../trust/keys.js'
import { loadTeamSpec } from '../teams/team-spec.js'
import { REMOTE_HOME_CWD, parseHost } from '../remote/host.js'
import { runAttach } from './attach.js'
import { teamRekey } from './team-rekey.js'
import { budgetFlags, collect } from './options.js'
import { firstLimit } from '../agent/budget.js'
import { shutdownSignal } from './signals.js'
import { LEAD_NAME, tasksDir, teamConfigPath, teamDir, validateTeammateName } from '../home/paths.js'
import { createTeam, readTeam, teamExists, updateTeam } from '../teams/team-store.js'
import { PermissionModeName } from '../permissions/rules/modes.js'
import type { TeamFile } from '../teams/types.js'
import { HOSTED_ABOVE, type PaneMode } from '../teams/hosting.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { colorize, colors, printJson, println } from '../terminal/output.js'
import { assertTeamModel } from './model-check.js'
import { warnIfNoSandbox } from './sandbox-warning.js'
import { teamList, teamShow } from './team-view.js'
import { settingsTrust } from './trust-settings.js'
import { announceDiscard, printTeardown, teardownJson } from './worktrees.js'

export interface TeamCreateOptions {
  agents?: string
  description?: string
  cwd?: string
  model?: string
  mode?: string
  maxCost?: string
  maxTokens?: string
  teamMaxCost?: string
  backend?: string
  agentType?: string[]
  /** `--agent name:kind`, repeatable. */
  agent?: string[]
  /** `--worktree` (every teammate) or `--worktree a,b`. */
  worktree?: boolean | string
  from?: string
  attach: boolean
  start: boolean
  json?: boolean
  coordinator?: boolean
  /** `--hosted`: the teammates run inside the leader's process, each shown in a pane. */
  hosted?: boolean
  /** `--isolated`: each teammate a process of its own in its pane, however many there are. */
  isolated?: boolean
}

/** `swarm team …` */
export function registerTeamCommands(program: Command): void {
  const team = program.command('team').description('create, list, show and delete teams')
  team
    .command('create <team>')
    .description('create a team with its roster (the lead, team-lead, is always a member)')
    .option('--agents <names>', 'teammates to add, comma-separated (e.g. alice,bob)')
    .option('--description <text>', 'what the team is for')
    .option('--cwd <dir>', 'working directory of the team (default: the current directory)')
    .option('--model <model>', 'model recorded for every teammate')
    .option('--max-cost <usd>', 'budget of every teammate, in USD')
    .option('--max-tokens <n>', 'budget of every teammate, in tokens')
    .option('--team-max-cost <usd>', 'budget of the whole team, in USD')
    .option('--mode <mode>', `permission mode recorded for every teammate (${PermissionModeName.options.join(', ')})`)
    .option('--backend <backend>', backendChoices().join(' | '), 'auto')
    .option('--agent-type <name:type>', 'agent type of a member, e.g. researcher:Explore (repeatable)', collect, [])
    .option(
      '--agent <name:kind>',
      `the agent CLI a member runs, e.g. reviewer:codex (${agentKindsHelp()} or a user-defined adapter; repeatable; adds the member if --agents does not name it)`,
      collect,
      [],
    )
    .option('--worktree [names]', 'teammates in git worktrees of their own: all of them, or the ones named (comma-separated)')
    .option('--from <file>', 'a team file (YAML) describing members, types, models, modes and prompts')
    .option('--no-attach', 'do not attach to the tmux session; print the attach command')
    .option('--no-start', 'write the team and its roster, start nothing')
    .option(
      '--hosted',
      `tmux: each teammate's pane shows a teammate that runs inside the leader's process (a few MB each instead of a Node process); a crash of the leader process ends them all (the default above ${HOSTED_ABOVE} teammates)`,
    )
    .option('--isolated', `tmux: each teammate a process of its own in its pane, also above ${HOSTED_ABOVE} teammates`)
    .option(
      '--coordinator',
      'the lead only delegates: Agent, SendMessage, TaskStop and the task tools, and the four phases (research, synthesis, implementation, verification)',
    )
    .option('--json', 'print the team as JSON')
    .action((name: string, opts: TeamCreateOptions) => teamCreate(name, opts))
  team
    .command('resume <team>')
    .description('re-adopt a team after a leader crash, a killed tmux server or a reboot: respawn what is dead')
    .option('--no-attach', 'do not attach; print the attach command')
    .option(
      '--trust-settings',
      'start members whose hooks or sandbox settings changed since they started (else asked on a terminal, exit 4 elsewhere)',
    )
    .option(
      '--include-stopped',
      'also start members stopped with `swarm kill`, each continuing its own session (Claude Code: --resume <its session>)',
    )
    .option('--json', 'print JSON')
    .action((name: string, opts: { attach: boolean; json?: boolean; trustSettings?: boolean; includeStopped?: boolean }) => teamResume(name, opts))
  team
    .command('list')
    .description('list teams')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }) => teamList(opts))
  team
    .command('show <team>')
    .description("show a team's members and tasks")
    .option('--json', 'print the config as JSON')
    .action((name: string, opts: { json?: boolean }) => teamShow(name, opts))
  team
    .command('rekey <team>')
    .description('make a new lead key pair: running teammates get the new public key signed by the old one, or are restarted when it is lost')
    .option('--json', 'print JSON')
    .action((name: string, opts: { json?: boolean }) => teamRekey(name, opts))
  team
    .command('delete <team>')
    .description("shut every member down (graceful, then forced), close panes and session, remove the team's files")
    .option('--force', 'do not wait: kill every member at once (also deletes a corrupt config)')
    .option('--timeout <seconds>', 'how long to wait for teammates to shut down', '15')
    .option('--discard', 'also remove worktrees with uncommitted changes or unmerged commits (named before they are destroyed)')
    .option('--json', 'print JSON')
    .action((name: string, opts: { force?: boolean; timeout?: string; discard?: boolean; json?: boolean }) => teamDelete(name, opts))
}

/** `--hosted` needs panes that can show hosted teammates (tmux), swarm's own agent, and a start. */
function checkHosted(backend: string, agentKinds: Array<string | undefined>, start: boolean): void {
  if (backend !== 'auto' && !showsHostedTeammates(backend)) {
    throw new UsageError(`--hosted shows teammates in tmux panes, which the ${backend} backend has not`, {
      hint: 'use --backend tmux, or leave out --hosted',
    })
  }
  if (agentKinds.some((k) => k !== undefined)) {
    throw new UsageError('--hosted teammates run swarm’s own agent: an agent CLI (--agent) runs in a pane of its own', {
      hint: 'leave out --hosted, or --agent',
    })
  }
  if (!start) throw new UsageError('--hosted starts the team: it cannot go with --no-start')
}

export async function teamCreate(name: string, opts: TeamCreateOptions): Promise<void> {
  const spec = opts.from ? await loadTeamSpec(opts.from, { backendChoices: backendChoices() }) : undefined
  const types = parseAgentTypes(opts.agentType ?? [])
  const kinds = parseNamePairs(opts.agent ?? [], '--agent', 'reviewer:codex')
  // `--agent critic:codex` (or `--agent-type critic:Explore`) names a teammate by itself: no need to repeat it in --agents.
  const names = [...new Set([...(spec?.members.map((m) => m.name) ?? []), ...splitList(opts.agents), ...kinds.keys(), ...types.keys()])]
  for (const n of names) validateTeammateName(n)
  const mode = opts.mode ?? spec?.mode
  if (mode !== undefined && !PermissionModeName.safeParse(mode).success) {
    throw new UsageError(`invalid --mode ${JSON.stringify(mode)}`, { hint: `use one of ${PermissionModeName.options.join(', ')}` })
  }
  const backend = parseBackendChoice(opts.backend !== 'auto' ? opts.backend : (spec?.backend ?? 'auto'))
  const cwd = path.resolve(opts.cwd ?? spec?.cwd ?? process.cwd())
  const stat = await fs.stat(cwd).catch(() => undefined)
  if (!stat?.isDirectory()) throw new UsageError(`--cwd ${cwd} is not a directory`)
  await warnIfNoSandbox(cwd)
  const model = opts.model ?? spec?.model
  const budget = { ...spec?.budget, ...budgetFlags(opts) }
  const teamBudget = {
    ...spec?.teamBudget,
    ...(opts.teamMaxCost !== undefined ? { maxCostUsd: budgetFlags({ maxCost: opts.teamMaxCost }).maxCostUsd } : {}),
  }
  const agentKinds = names.map((a) => kinds.get(a) ?? spec?.members.find((x) => x.name === a)?.agent)
  if (opts.hosted && opts.isolated) throw new UsageError('--hosted and --isolated are two answers to one question: give one')
  if (opts.hosted) checkHosted(backend, agentKinds, opts.start)
  if (opts.isolated && backend === 'in-process')
    throw new UsageError('--isolated gives each teammate a process in a pane: the in-process backend has none', {
      hint: 'use --backend tmux, or leave out --isolated',
    })
  // Where auto finds no panes (not interactive, no tmux): refused before anything is written, as startTeam would after.
  if (opts.start && (opts.hosted || opts.isolated) && backend === 'auto')
    refusePaneModeWithoutPanes(opts.hosted ? 'hosted' : 'isolated', await selectBackend(backend, systemDetectInputs(process.env)))
  // `host:`: that machine's swarm checks its agent CLI, agent type and cwd when it starts it.
  const hosts = new Map(
    names.flatMap((a) => {
      const h = spec?.members.find((x) => x.name === a)?.host
      return h === undefined ? [] : [[a, parseHost(h).spec] as const]
    }),
  )
  await checkAdapters(
    name,
    names
      .filter((a) => !hosts.has(a))
      .map((a) => ({ name: a, kind: agentKinds[names.indexOf(a)], agentType: types.get(a) ?? spec?.members.find((x) => x.name === a)?.agentType })),
    cwd,
    opts.start,
  )
  if (opts.start) assertTeamModel(agentKinds, process.env, 'write the team only with --no-start')

  const isolated = worktreeChoice(opts.worktree, names)
  const members = names.map((a) => {
    const m = spec?.members.find((x) => x.name === a)
    const worktree = isolated.has(a) ? true : (m?.worktree ?? spec?.worktree)
    return { name: a, cwd: m?.cwd, agentType: types.get(a) ?? m?.agentType, worktree }
  })
  for (const [a, h] of hosts)
    if (members.find((m) => m.name === a)?.worktree)
      throw new UsageError(`${a}: a worktree on ${h} is not supported yet`, { hint: 'give it a cwd that is a clone on that host' })
  await checkAgentTypes(
    members.filter((m) => !hosts.has(m.name)),
    cwd,
  )
  await checkWorktrees(name, members, cwd)
  const existed = await teamExists(name)
  const created = createTeam({
    name,
    description: opts.description ?? spec?.description,
    cwd,
    members: names.map((a, k) => {
      const m = spec?.members.find((x) => x.name === a)
      return {
        ...(members[k].worktree !== undefined && { worktree: members[k].worktree }),
        name: a,
        ...((types.get(a) ?? m?.agentType) !== undefined && { agentType: types.get(a) ?? m?.agentType }),
        ...((m?.model ?? model) !== undefined && { model: m?.model ?? model }),
        ...((m?.mode ?? mode) !== undefined && { mode: m?.mode ?? mode }),
        ...(m?.prompt !== undefined && { prompt: m.prompt }),
        ...(m?.cwd !== undefined && { cwd: m.cwd }),
        // On a host: its cwd is a path there, its HOME (`~`) unless given — never this machine's.
        ...(hosts.has(a) && { host: hosts.get(a), cwd: m?.cwd ?? REMOTE_HOME_CWD }),
        ...firstLimit({ maxCostUsd: m?.maxCostUsd, maxTokens: m?.maxTokens }, budget),
        ...((kinds.get(a) ?? m?.agent) !== undefined && { agent: kinds.get(a) ?? m?.agent }),
        ...(builtInAdapter(kinds.get(a) ?? m?.agent ?? '')?.ownsInbox && { ownsInbox: true }),
      }
    }),
    ...(teamBudget.maxCostUsd !== undefined || teamBudget.maxTokens !== undefined ? { budget: teamBudget } : {}),
  }).then(async (t) => {
    await ensureTeamKeys(t.name)
    return t
  })
  const team = await created.catch((err: unknown) => (existed ? Promise.reject(err) : undoFullDisk(name, err)))
  // Recorded in the team, so the leader started in its pane (and `team resume`) coordinates too.
  if (opts.coordinator) {
    await updateTeam(team.name, (t) => {
      t.swarmCoordinator = true
    })
  }
  if (!opts.start) {
    // The backend chosen now is the one `team resume` (or `swarm leader`) starts it on later; with
    // auto, resume detects it where it runs.
    if (backend !== 'auto') {
      await updateTeam(team.name, (t) => {
        t.swarmBackend = backend
      })
    }
    if (opts.json) printJson(await readTeam(team.name))
    else {
      println(`created team ${colors.bold(team.name)} with ${team.members.length} member(s): ${memberNames(team)}`)
      println(`config: ${teamConfigPath(team.name)}`)
    }
    return
  }
  const panes: PaneMode = opts.hosted ? 'hosted' : opts.isolated ? 'isolated' : 'auto'
  const started = await startTeam(team.name, { backend, env: process.env, panes })
  if (started.backend === 'in-process') {
    if (!opts.json) println(`created team ${colors.bold(team.name)} (${started.reason}); the leader runs here with its teammates inside it`)
    await runLeader({ team: team.name, env: process.env, signal: shutdownSignal().signal })
    process.exit(0)
  }
  const attach = attachCommand(team.name)
  if (opts.json)
    printJson({
      team: team.name,
      backend: started.backend,
      ...(started.hosted && { hosted: true }),
      leaderPane: started.leaderPane,
      teammates: started.teammates,
      attach,
    })
  else {
    println(`created team ${colors.bold(team.name)} on ${started.backend} (${started.reason}): ${memberNames(await readTeam(team.name))}`)
    println(`attach with: swarm attach ${team.name}   (or: ${attach})`)
  }
  if (opts.attach && !opts.json && process.stdin.isTTY && process.stdout.isTTY && started.backend === 'tmux') await runAttach(team.name)
}

/**
 * A team create (of a team that did not exist) that the disk stopped half-way (full: ENOSPC,
 * EDQUOT) takes away what it made, so
 * that no team without its key stays behind; the error then goes on to the funnel (exit 10).
 */
async function undoFullDisk(team: string, err: unknown): Promise<never> {
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    for (const dir of [teamDir(team), tasksDir(team)]) await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined)
  }
  throw err
}

/** `--worktree` → every name; `--worktree a,b` → those (each must be a teammate). */
function worktreeChoice(option: boolean | string | undefined, names: string[]): Set<string> {
  if (option === undefined || option === false) return new Set()
  if (option === true) return new Set(names)
  const chosen = splitList(option)
  for (const c of chosen) if (!names.includes(c)) throw new UsageError(`--worktree names ${c}, which is not in --agents`)
  return new Set(chosen)
}

/** Before the team is written: every agent type the roster names is defined (else exit 3 naming the known ones). */
async function checkAgentTypes(members: Array<{ cwd?: string; agentType?: string }>, cwd: string): Promise<void> {
  if (!members.some((m) => m.agentType)) return
  const { checkAgentType } = await import('../agent/definitions/load.js')
  for (const m of members) if (m.agentType) await checkAgentType(m.agentType, { cwd: path.resolve(cwd, m.cwd ?? '.') })
}

/** Before the team is written: every worktree the roster asks for can be made (see planWorktree). */
async function checkWorktrees(
  team: string,
  members: Array<{ name: string; cwd?: string; agentType?: string; worktree?: boolean | string }>,
  cwd: string,
): Promise<void> {
  if (!members.some((m) => m.worktree || m.agentType)) return
  const [{ wantsWorktree }, { planWorktree }] = await Promise.all([import('../agent/definitions/isolation.js'), import('../worktrees/worktree.js')])
  for (const m of members) {
    const want = await wantsWorktree({
      ...(m.worktree !== undefined ? { worktree: m.worktree } : {}),
      ...(m.agentType ? { agentType: m.agentType } : {}),
      cwd,
    })
    if (want)
      await planWorktree({
        repoDir: path.resolve(cwd, m.cwd ?? '.'),
        team,
        name: m.name,
        ...(typeof m.worktree === 'string' ? { slug: m.worktree } : {}),
      })
  }
}

export async function teamResume(
  name: string,
  opts: { attach: boolean; json?: boolean; trustSettings?: boolean; includeStopped?: boolean },
): Promise<void> {
  // Before anything is reaped or respawned: a teammate started without a model dies at once.
  const config = await readTeam(name)
  assertTeamModel(
    config.members.filter((m) => m.name !== LEAD_NAME).map((m) => m.agent),
    process.env,
  )
  const report = await resumeTeam(name, {
    env: process.env,
    trustSettings: settingsTrust(opts),
    ...(opts.includeStopped ? { includeStopped: true } : {}),
  })
  if (report.backend === 'in-process') {
    if (!opts.json) {
      println(`resuming in-process team ${name}: the leader runs here, its teammates continue from their transcripts`)
      if (report.alive.length || report.respawned.length)
        println(`on other hosts: alive: ${report.alive.join(', ') || 'none'}; respawned: ${report.respawned.join(', ') || 'none'}`)
      printUnreachable(report)
      for (const s of report.stopped) println(stoppedLine(name, s))
      if (report.reaped.length) println(`stopped what the old leader's teammates left running: ${describeProcesses(report.reaped)}`)
    }
    await runLeader({ team: name, env: process.env, signal: shutdownSignal().signal })
    process.exit(0)
  }
  if (opts.json) printJson({ team: name, ...report, attach: attachCommand(name) })
  else {
    println(`team ${name}: leader ${report.leader}; alive: ${report.alive.join(', ') || 'none'}; respawned: ${report.respawned.join(', ') || 'none'}`)
    if (report.restarted?.length) println(`started again (stopped with swarm kill): ${report.restarted.join(', ')}`)
    if (report.hosted?.length)
      println(
        `inside the leader${report.leader === 'started' ? ', which restarts them and their panes as it starts' : ''}: ${report.hosted.join(', ')}`,
      )
    printUnreachable(report)
    for (const s of report.stopped) println(stoppedLine(name, s))
    if (report.reaped.length) println(`stopped what dead members left running: ${describeProcesses(report.reaped)}`)
    println(`attach with: swarm attach ${name}   (or: ${attachCommand(name)})`)
  }
  if (opts.attach && !opts.json && process.stdin.isTTY && process.stdout.isTTY && report.backend === 'tmux') await runAttach(name)
}

/** Members on a host that did not answer in time: left as they are (they may run on there). */
function printUnreachable(report: ResumeReport): void {
  if (report.unreachable?.length)
    println(
      `not reached (their host did not answer in time; left as they are): ${report.unreachable.join(', ')}; try again: swarm hosts check <host>`,
    )
}

/** A member `team resume` left stopped (both backends say it the same way). */
function stoppedLine(team: string, name: string): string {
  return `stopped: ${name} (swarm kill); continue its session with: swarm team resume ${team} --include-stopped (or start it anew: swarm spawn ${team} ${name})`
}

/** `3 processes: pid 12 (bob: sleep 600), …` — commands are teammate-controlled text: one plain line each. */
function describeProcesses(list: ReapedProcess[]): string {
  const shown = list.slice(0, 10).map((p) => `pid ${p.pid} (${p.agent || '?'}: ${terminalSafe(p.command.slice(0, 60), { singleLine: true })})`)
  return `${list.length} process${list.length === 1 ? '' : 'es'}: ${shown.join(', ')}${list.length > shown.length ? ', …' : ''}`
}

function attachCommand(team: string): string {
  // Inside tmux the team is a window of the user's own session.
  if (process.env.TMUX) return `tmux select-window -t ${team}`
  const socket = process.env.SWARM_TMUX_SOCKET || 'swarm'
  return `tmux -L ${socket} attach -t swarm-${team}`
}

/** ['researcher:Explore'] → Map{researcher → Explore} */
function parseAgentTypes(values: string[]): Map<string, string> {
  return parseNamePairs(values, '--agent-type', 'researcher:Explore')
}

/** ['name:value', …] → Map{name → value}; `example` shows the form in the error. */
function parseNamePairs(values: string[], option: string, example: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const v of values) {
    const [name, value] = v.split(':')
    if (!name || !value)
      throw new UsageError(`${option} ${JSON.stringify(v)} should be name:${option === '--agent' ? 'kind' : 'type'}`, {
        hint: `e.g. ${option} ${example}`,
      })
    out.set(name, value)
  }
  return out
}

/**
 * Before the team is written: every --agent / team-file `agent:` (else the `agent:` of the member's
 * agent definition) names a known adapter, one that can start here — its binary installed unless
 * the roster is only written (`--no-start`).
 */
async function checkAdapters(
  team: string,
  members: ReadonlyArray<{ name: string; kind?: string | undefined; agentType?: string | undefined }>,
  cwd: string,
  start: boolean,
): Promise<void> {
  if (!members.some((m) => m.kind !== undefined || m.agentType !== undefined)) return
  const [{ preflightAgent }, { loadAgentDefinitions }] = await Promise.all([
    import('../adapters/preflight.js'),
    import('../agent/definitions/load.js'),
  ])
  const { definitions } = await loadAgentDefinitions({ cwd, env: process.env })
  for (const m of members) {
    const kind = m.kind ?? (m.agentType ? definitions.get(m.agentType)?.agent : undefined)
    await preflightAgent(kind, { cwd, env: process.env, team, name: m.name, binary: start })
  }
}

export async function teamDelete(name: string, opts: { force?: boolean; timeout?: string; discard?: boolean; json?: boolean }): Promise<void> {
  const seconds = Number(opts.timeout ?? '15')
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`invalid --timeout ${JSON.stringify(opts.timeout)}`, { hint: 'give seconds, e.g. --timeout 30' })
  const tty = Boolean(process.stderr.isTTY) && !opts.json
  const result = await deleteTeamFully(name, {
    env: process.env,
    force: opts.force,
    timeoutMs: seconds * 1000,
    progress: (line) => process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`),
    ...(opts.discard ? { discard: true, onDiscard: announceDiscard } : {}),
  })
  if (tty) process.stderr.write('\r\x1b[K')
  if (opts.json)
    printJson({
      deleted: result.team,
      exited: result.exited,
      signalled: result.signalled ?? [],
      killed: result.killed,
      processes: result.processes,
      ...(result.keptConfig ? { keptConfig: result.keptConfig } : {}),
      ...(result.tmuxSocketRemoved ? { tmuxSocketRemoved: result.tmuxSocketRemoved } : {}),
      worktrees: teardownJson(result.worktrees),
    })
  else {
    println(
      `deleted team ${result.team}${result.exited.length ? `; shut down: ${result.exited.join(', ')}` : ''}${result.signalled?.length ? `; ended with SIGTERM (they obey only their gone Claude Code lead's signature): ${result.signalled.join(', ')}` : ''}${result.killed.length ? `; killed: ${result.killed.join(', ')}` : ''}`,
    )
    if (result.processes.length) println(`stopped ${describeProcesses(result.processes)}`)
    if (result.keptConfig) println(`its corrupt config.json was kept as ${result.keptConfig}`)
    if (result.tmuxSocketRemoved) println(`removed the gone Claude Code lead's tmux socket ${result.tmuxSocketRemoved}`)
    printTeardown(result.worktrees)
  }
  for (const p of result.worktrees.problems) process.stderr.write(`swarm: ${p}\n`)
}

function memberNames(team: TeamFile): string {
  return team.members.map((m) => (m.name === LEAD_NAME ? m.name : colorize(m.color, m.name))).join(', ')
}

/** "a, b,,c" → ['a', 'b', 'c'] */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}
