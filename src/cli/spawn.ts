import fs from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { backendChoices } from '../backends/registry.js'
import { agentKindsHelp } from '../adapters/registry.js'
import { SWARM_AGENT_KIND } from '../adapters/types.js'
import { definedOnly } from '../util/object.js'
import { ConflictError, UsageError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import type { KillOutcome } from '../supervisor/stop.js'
import { printJson, println } from '../terminal/output.js'
import { budgetFlags } from './options.js'
import { warnIfNoSandbox } from './sandbox-warning.js'
import { refuseFromTeammate } from './lead-only.js'

export interface SpawnCommandOptions {
  backend?: string
  cwd?: string
  command?: string
  model?: string
  maxCost?: string
  maxTokens?: string
  mode?: string
  agentType?: string
  agent?: string
  prompt?: string
  /** true, or the worktree's name. */
  worktree?: boolean | string
  json?: boolean
  /** `user@host[:port]`: run it on that machine over ssh. */
  host?: string
}

export interface KillCommandOptions {
  now?: boolean
  respectRefusal?: boolean
  remove?: boolean
  discard?: boolean
  timeout?: string
  json?: boolean
}

/** `swarm spawn` and `swarm kill`. Implementations are imported when a command runs, to keep startup fast. */
export function registerSpawnCommands(program: Command): void {
  program
    .command('spawn')
    .description('start a teammate (any command, or the swarm agent) in a pane of the team and register it')
    .argument('<team>', 'team name')
    .argument('<name>', 'teammate name')
    .option('--backend <backend>', `${backendChoices().join(' | ')} (an explicit choice that cannot work is an error)`, 'auto')
    .option('--cwd <dir>', "working directory of the teammate (default: the lead's)")
    .option('--command <shell-command>', 'run this shell command instead of "swarm agent" (claude, codex, a script…)')
    .option('--model <model>', 'model for the swarm agent')
    .option('--max-cost <usd>', 'budget in USD: at the limit the teammate stops and waits for `swarm budget`')
    .option('--max-tokens <n>', 'budget in tokens (input, cache and output together)')
    .option('--mode <mode>', 'permission mode for the swarm agent')
    .option('--agent-type <type>', 'agent definition for the swarm agent')
    .option(
      '--agent <kind>',
      `the agent CLI to run: ${agentKindsHelp()} (swarm, the default, is swarm's own agent), or a user-defined adapter (.claude/swarm-agents/<kind>.yaml)`,
    )
    .option('--prompt <text>', "first message, put in the teammate's inbox from team-lead")
    .option(
      '--worktree [name]',
      'run in a git worktree of its own at <repo>/.claude/worktrees/<name> (default <team>-<name>), branch swarm/<team>/<name>; with --host, in a clone on that host (swarm worktrees fetch brings the branch back)',
    )
    .option(
      '--host <user@host[:port]>',
      'run it on another machine, in tmux there, over one ssh connection (a Host of your ssh config works); --cwd is then a path there',
    )
    .option('--json', 'print the result as JSON')
    .action((team: string, name: string, opts: SpawnCommandOptions) => runSpawn(team, name, opts))

  program
    .command('kill')
    .description('stop a teammate: ask it to shut down, force it after a timeout (or at once with --now)')
    .argument('<team>', 'team name')
    .argument('<name>', 'teammate name')
    .option('--now', 'kill the pane and its process tree at once')
    .option('--timeout <ms>', 'how long to wait for a graceful stop', '10000')
    .option('--respect-refusal', 'a teammate that refuses to shut down is left running (exit 4) instead of killed')
    .option('--remove', 'then remove it from the team: its open tasks go back to pending, its clean worktree is removed')
    .option('--discard', 'with --remove: remove its worktree even with uncommitted changes or unmerged commits (named first)')
    .option('--json', 'print the result as JSON')
    .action((team: string, name: string, opts: KillCommandOptions) => runKill(team, name, opts))
}

/**
 * `swarm spawn --host`: the member's cwd, agent type and CLI are the host's to check (its swarm
 * plans the launch). With --worktree, --cwd is a directory here, in the repository whose HEAD the
 * member's branch starts from (worktrees/host-worktree.ts).
 */
async function spawnOnHost(team: string, name: string, host: string, opts: SpawnCommandOptions): Promise<void> {
  if (opts.command !== undefined) throw new UsageError("--host runs swarm's agent or an agent CLI (--agent), not --command")
  const { spawnTeammate } = await import('../supervisor/teammates.js')
  const cwd = opts.worktree && opts.cwd !== undefined ? await existingDir(opts.cwd) : opts.cwd
  const { member, spawned, worktree } = await spawnTeammate(team, {
    name,
    host,
    ...definedOnly({ cwd, model: opts.model, mode: opts.mode, agentType: opts.agentType, agent: opts.agent, prompt: opts.prompt }),
    ...(opts.worktree ? { worktree: opts.worktree } : {}),
    ...budgetFlags(opts),
  })
  if (opts.json)
    return printJson({
      team,
      name,
      agentId: spawned.agentId,
      backend: spawned.backendType,
      host: member.host,
      pane: spawned.paneId,
      pid: spawned.pid,
      cwd: member.cwd,
      ...(worktree && { worktreePath: worktree.path, branch: worktree.branch, worktreeReused: worktree.reused }),
    })
  const tree = worktree
    ? ` in ${worktree.reused ? 'its existing worktree' : 'worktree'} ${worktree.path} there (branch ${worktree.branch}; swarm worktrees fetch ${team} ${name} brings it here)`
    : ''
  println(`spawned ${name} on ${member.host} (pane ${spawned.paneId} there)${tree}; swarm attach ${team} ${name} shows it`)
}

export async function runSpawn(team: string, name: string, opts: SpawnCommandOptions): Promise<void> {
  refuseFromTeammate() // its first prompt is signed as team-lead
  const [{ spawnTeammate }, { attachHint, parseBackendChoice }, { validateTeammateName, validateName }] = await Promise.all([
    import('../supervisor/teammates.js'),
    import('../backends/registry.js'),
    import('../home/paths.js'),
  ])
  // The names first: a bad one is exit 2 whatever the backend would have said.
  validateName(team)
  validateTeammateName(name)
  const backend = parseBackendChoice(opts.backend)
  if (opts.command !== undefined && opts.agent !== undefined)
    throw new UsageError('--command and --agent both say what to run', { hint: 'give one of them' })
  if (opts.host !== undefined) return spawnOnHost(team, name, opts.host, opts)
  const cwd = opts.cwd === undefined ? undefined : await existingDir(opts.cwd)
  await warnIfNoSandbox(cwd ?? process.cwd())
  if (backend === 'in-process' || (backend === 'auto' && (await teamRunsInProcess(team)))) {
    if (opts.command !== undefined)
      throw new UsageError('an in-process teammate runs the swarm agent, not a command', { hint: 'use --backend tmux with --command' })
    if (opts.agent !== undefined && opts.agent !== SWARM_AGENT_KIND)
      throw new UsageError(`an in-process teammate runs the swarm agent, not ${opts.agent}`, { hint: 'use --backend tmux with --agent' })
    if (opts.worktree) await checkWorktree(team, name, cwd, opts.worktree)
    if (opts.agentType !== undefined) await checkType(team, cwd, opts.agentType)
    const { requestInProcessSpawn } = await import('../leader/spawn-request.js')
    const member = await requestInProcessSpawn(team, {
      name,
      ...definedOnly({ cwd, model: opts.model, mode: opts.mode, agentType: opts.agentType, prompt: opts.prompt }),
      ...(opts.worktree ? { worktree: opts.worktree } : {}),
      ...budgetFlags(opts),
    })
    if (opts.json)
      return printJson({ team, name, agentId: member.agentId, backend: 'in-process', pane: 'in-process', color: member.color, cwd: member.cwd })
    return println(`spawned ${name} in-process, inside the team's leader`)
  }
  if (opts.agent !== undefined) await preflight(team, name, opts.agent)
  const { member, spawned, worktree } = await spawnTeammate(
    team,
    {
      name,
      command: opts.command,
      cwd,
      model: opts.model,
      mode: opts.mode,
      agentType: opts.agentType,
      agent: opts.agent,
      prompt: opts.prompt,
      ...(opts.worktree ? { worktree: opts.worktree } : {}),
      ...budgetFlags(opts),
    },
    { backend },
  )
  const attach = attachHint(spawned.backendType, team)
  if (opts.json) {
    printJson({
      team,
      name,
      agentId: spawned.agentId,
      backend: spawned.backendType,
      pane: spawned.paneId,
      pid: spawned.pid,
      color: member.color,
      cwd: member.cwd,
      ...(worktree && { worktreePath: worktree.path, branch: worktree.branch, worktreeReused: worktree.reused, linked: worktree.links }),
      ...(attach && { attach }),
    })
    return
  }
  const where = spawned.backendType === 'tmux' ? `tmux pane ${spawned.paneId}` : `iTerm2 session ${spawned.paneId}`
  const tree = worktree ? ` in ${worktree.reused ? 'its existing worktree' : 'worktree'} ${worktree.path} (branch ${worktree.branch})` : ''
  println(`spawned ${name} in ${where}${spawned.pid ? ` (pid ${spawned.pid})` : ''}${tree}${attach ? ` — watch with: ${attach}` : ''}`)
}

export async function runKill(team: string, name: string, opts: KillCommandOptions): Promise<void> {
  refuseFromTeammate() // its shutdown_request is signed as team-lead
  const { killTeammate } = await import('../supervisor/stop.js')
  const timeoutMs = Number(opts.timeout)
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw new UsageError(`--timeout must be a number of milliseconds (got ${JSON.stringify(opts.timeout)})`)
  if (opts.discard && !opts.remove) throw new UsageError('--discard is for the worktree of a teammate removed with --remove')
  if (opts.respectRefusal && opts.now) throw new UsageError('--respect-refusal asks first; --now does not ask', { hint: 'give one of them' })
  const result = await killTeammate(team, name, { now: opts.now, timeoutMs, ...(opts.respectRefusal ? { respectRefusal: true } : {}) })
  if (result.outcome === 'refused') {
    if (opts.json) {
      printJson({ team, name, ...result })
      process.exitCode = 4
      return
    }
    throw new ConflictError('SWARM_SHUTDOWN_REFUSED', `${name} refused to shut down (${result.reason}); left running`, {
      hint: `swarm kill ${team} ${name} without --respect-refusal stops it anyway`,
    })
  }
  if (opts.remove) return removeAfterKill(team, name, opts, result)
  if (opts.json) return printJson({ team, name, ...result })
  println(killLine(name, result, timeoutMs))
}

async function removeAfterKill(team: string, name: string, opts: KillCommandOptions, killed: KillOutcome): Promise<void> {
  const [{ removeTeammate }, { announceDiscard, printTeardown, teardownJson }] = await Promise.all([
    import('../leader/lifecycle.js'),
    import('./worktrees.js'),
  ])
  const worktrees = await removeTeammate(team, name, {
    env: process.env,
    waitMs: killed.outcome === 'requested' ? Number(opts.timeout) : 3_000,
    ...(opts.discard ? { discard: true, onDiscard: announceDiscard } : {}),
  })
  if (opts.json) printJson({ team, name, ...killed, removed: true, worktrees: teardownJson(worktrees) })
  else {
    println(killLine(name, killed, Number(opts.timeout)))
    println(`removed ${name} from team ${team}`)
    printTeardown(worktrees)
  }
  for (const p of worktrees.problems) process.stderr.write(`swarm: ${p}\n`)
}

function killLine(name: string, result: KillOutcome, timeoutMs: number): string {
  switch (result.outcome) {
    case 'exited':
      return `${name} has stopped`
    case 'approved':
      return `${name} agreed to shut down and has stopped`
    case 'signalled':
      return `${name} obeys only its gone Claude Code lead's signature: ended it with SIGTERM`
    case 'requested':
      return `asked ${name} to shut down (it runs inside its leader, which stops it)`
    case 'refused':
      return `${name} refused to shut down (${result.reason}); left running`
    case 'killed':
      if (result.after === 'timeout') return `${name} did not stop within ${timeoutMs} ms; killed it and its processes`
      if (result.after === 'rejected') return `${name} refused to shut down (${result.reason}); killed it and its processes`
      return `killed ${name} and its processes`
  }
}

/** The leader makes an in-process teammate's worktree: check here that it can, to fail where the user sees it. */
async function checkWorktree(team: string, name: string, cwd: string | undefined, worktree: true | string): Promise<void> {
  const [{ readTeam }, { planWorktree }] = await Promise.all([import('../teams/team-store.js'), import('../worktrees/worktree.js')])
  const leadCwd = (await readTeam(team)).members.find((m) => m.name === 'team-lead')?.cwd ?? process.cwd()
  await planWorktree({ repoDir: cwd ?? leadCwd, team, name, ...(typeof worktree === 'string' ? { slug: worktree } : {}) })
}

/** The leader starts an in-process teammate: an unknown agent type is refused here (exit 3), where the user sees it. */
async function checkType(team: string, cwd: string | undefined, agentType: string): Promise<void> {
  const [{ readTeam }, { checkAgentType }] = await Promise.all([import('../teams/team-store.js'), import('../agent/definitions/load.js')])
  const leadCwd = (await readTeam(team)).members.find((m) => m.name === 'team-lead')?.cwd ?? process.cwd()
  await checkAgentType(agentType, { cwd: cwd ?? leadCwd })
}

async function existingDir(dir: string): Promise<string> {
  const abs = path.resolve(dir)
  const stat = await fs.stat(abs).catch(() => undefined)
  if (!stat?.isDirectory()) throw new UsageError(`--cwd ${JSON.stringify(dir)} is not a directory`)
  return abs
}

/** A team whose leader hosts its teammates (recorded at creation, or what its members run on). */
async function teamRunsInProcess(team: string): Promise<boolean> {
  const [{ readTeam }, { teamBackend }] = await Promise.all([import('../teams/team-store.js'), import('../backends/team-backend.js')])
  return teamBackend(await readTeam(team)) === 'in-process'
}

/** An agent CLI that cannot start here (no provider variables, no binary, a name it cannot address) is refused before the teammate is registered. */
async function preflight(team: string, name: string, agent: string): Promise<void> {
  const [{ readTeam }, { preflightAgent }] = await Promise.all([import('../teams/team-store.js'), import('../adapters/preflight.js')])
  const leadCwd = (await readTeam(team)).members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  await preflightAgent(agent, { cwd: leadCwd, env: process.env, team, name })
}
