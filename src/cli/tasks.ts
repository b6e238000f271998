import { Command } from 'commander'
import { ConflictError, NotFoundError, UsageError } from '../errors.js'
import { teammateOf } from '../home/member-marker.js'
import { LEAD_NAME } from '../home/paths.js'
import { openBlockers } from '../tasks/task-graph.js'
import {
  type ClaimFailure,
  type TaskPatch,
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  getTask,
  listTasks,
  updateTask,
} from '../tasks/task-store.js'
import { findMember, readTeam } from '../teams/team-store.js'
import { type Task, TaskStatus } from '../tasks/types.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { printJson, println, table } from '../terminal/output.js'
import { oneLineUsageErrors } from './errors.js'
import { splitList } from './team.js'

interface JsonOpt {
  json?: boolean
}
interface AddOpts extends JsonOpt {
  description?: string
  activeForm?: string
  blockedBy?: string
  blocks?: string
  owner?: string
  from: string
}
interface UpdateOpts extends JsonOpt {
  status?: string
  owner?: string | false
  subject?: string
  description?: string
  activeForm?: string
  addBlocks?: string
  addBlockedBy?: string
  from: string
}

/**
 * `swarm tasks <team> <action> …`. commander cannot put a positional argument before
 * subcommands, so the action and its options are passed through to a small inner program.
 */
export function registerTaskCommands(program: Command): void {
  program.enablePositionalOptions()
  program
    .command('tasks')
    .description("the team's shared task list: list, add, show, claim, update, complete, delete")
    .argument('<team>', 'the team')
    .argument('[action...]', 'list | add | show | claim | update | complete | delete, with its arguments')
    .passThroughOptions()
    .helpOption('-h, --help', 'show help (for an action: swarm tasks <team> <action> --help)')
    .addHelpText('after', () => '\n' + actionsProgram('<team>').helpInformation())
    .action((team: string, action: string[]) => runTasks(team, action))
}

export async function runTasks(team: string, argv: string[]): Promise<void> {
  // `swarm tasks <team>` and `swarm tasks <team> --json` mean list.
  const bare = argv.length === 0 || (argv[0].startsWith('-') && argv[0] !== '-h' && argv[0] !== '--help')
  await actionsProgram(team).parseAsync(bare ? ['list', ...argv] : argv, { from: 'user' })
}

function actionsProgram(team: string): Command {
  const p = new Command(`swarm tasks ${team}`).exitOverride()
  p.command('list')
    .description('list tasks by id')
    .option('--json', 'print JSON')
    .action((o: JsonOpt) => tasksList(team, o))
  p.command('add <subject>')
    .description('add a task')
    .option('--description <text>', 'what to do', '')
    .option('--active-form <text>', 'present-continuous form shown while it runs ("Writing tests")')
    .option('--blocked-by <ids>', 'ids of tasks that must be completed first, comma-separated')
    .option('--blocks <ids>', 'ids of tasks that wait for this one, comma-separated')
    .option('--owner <name>', 'assign it to a member (who gets a task_assignment message)')
    .option('--from <name>', 'who assigns it', LEAD_NAME)
    .option('--json', 'print the task as JSON')
    .action((subject: string, o: AddOpts) => tasksAdd(team, subject, o))
  p.command('show <id>')
    .description('show one task')
    .option('--json', 'print JSON')
    .action((id: string, o: JsonOpt) => tasksShow(team, id, o))
  p.command('claim <id>')
    .description('take a task for a member: owner and in_progress (fails if claimed, blocked or completed)')
    .requiredOption('--as <name>', 'the member claiming it')
    .option('--check-busy', 'also fail if that member already owns an unfinished task')
    .option('--json', 'print the result as JSON')
    .action((id: string, o: JsonOpt & { as: string; checkBusy?: boolean }) => tasksClaim(team, id, o))
  p.command('update <id>')
    .description('change a task')
    .option('--status <status>', TaskStatus.options.join(' | '))
    .option('--owner <name>', 'assign it to a member (who gets a task_assignment message)')
    .option('--no-owner', 'clear the owner')
    .option('--subject <text>', 'new subject')
    .option('--description <text>', 'new description')
    .option('--active-form <text>', 'new active form')
    .option('--add-blocks <ids>', 'tasks that wait for this one')
    .option('--add-blocked-by <ids>', 'tasks this one waits for')
    .option('--from <name>', 'who makes the change', LEAD_NAME)
    .option('--json', 'print the task as JSON')
    .action((id: string, o: UpdateOpts) => tasksUpdate(team, id, o))
  p.command('complete <id>')
    .description('mark a task completed (its dependents become claimable)')
    .option('--from <name>', 'who completes it', LEAD_NAME)
    .option('--json', 'print JSON')
    .action((id: string, o: JsonOpt & { from: string }) => tasksComplete(team, id, o))
  p.command('delete <id>')
    .description('delete a task (its id is never reused)')
    .option('--json', 'print JSON')
    .action((id: string, o: JsonOpt) => tasksDelete(team, id, o))
  oneLineUsageErrors(p)
  return p
}

async function tasksList(team: string, o: JsonOpt): Promise<void> {
  await readTeam(team)
  const tasks = await listTasks(team)
  if (o.json) return printJson(tasks)
  if (!tasks.length) return println(`no tasks in team ${team}`)
  const rows = [['ID', 'STATUS', 'OWNER', 'BLOCKED BY', 'SUBJECT']]
  for (const t of tasks) rows.push([t.id, t.status, t.owner ?? '-', openBlockers(t, tasks).join(',') || '-', t.subject])
  println(table(rows))
}

/**
 * Who makes a change. A teammate's shell always acts as itself (`--from` defaults to team-lead):
 * naming another member is refused, like `swarm send`'s.
 */
function actor(from: string): string {
  const self = teammateOf(process.env)
  if (self === undefined) return from
  if (from !== self && from !== LEAD_NAME)
    throw new UsageError(`swarm tasks from ${self}'s shell acts as ${self}, not as ${from}`, { hint: 'leave out --from' })
  return self
}

async function tasksAdd(team: string, subject: string, o: AddOpts): Promise<void> {
  o.from = actor(o.from)
  const config = await readTeam(team)
  findMember(config, o.from)
  if (o.owner) findMember(config, o.owner)
  const task = await createTask(
    team,
    {
      subject,
      description: o.description ?? '',
      ...(o.activeForm !== undefined && { activeForm: o.activeForm }),
      ...(o.owner !== undefined && { owner: o.owner }),
      blockedBy: splitList(o.blockedBy),
      blocks: splitList(o.blocks),
    },
    { by: o.from },
  )
  if (o.json) printJson(task)
  else println(terminalSafe(`added task ${task.id}: ${task.subject}${task.owner ? ` (owner ${task.owner})` : ''}`))
}

async function tasksShow(team: string, id: string, o: JsonOpt): Promise<void> {
  await readTeam(team)
  const task = await getTask(team, id)
  if (o.json) return printJson(task)
  println(terminalSafe(`task ${task.id}: ${task.subject}`))
  println(terminalSafe(`status: ${task.status}${task.owner ? `, owner ${task.owner}` : ''}`))
  if (task.activeForm) println(terminalSafe(`active form: ${task.activeForm}`))
  if (task.blockedBy.length) println(`blocked by: ${task.blockedBy.join(', ')}`)
  if (task.blocks.length) println(`blocks: ${task.blocks.join(', ')}`)
  if (task.description) println(terminalSafe('\n' + task.description))
}

async function tasksClaim(team: string, id: string, o: JsonOpt & { as: string; checkBusy?: boolean }): Promise<void> {
  findMember(await readTeam(team), o.as)
  const result = await claimTask(team, id, o.as, { checkAgentBusy: o.checkBusy })
  if (o.json) printJson(result)
  if (!result.ok) throw claimError(team, id, o.as, result)
  if (!o.json) println(terminalSafe(`${o.as} claimed task ${id}: ${result.task.subject}`))
}

async function tasksUpdate(team: string, id: string, o: UpdateOpts): Promise<void> {
  o.from = actor(o.from)
  const config = await readTeam(team)
  findMember(config, o.from)
  if (typeof o.owner === 'string') findMember(config, o.owner)
  const patch: TaskPatch = {}
  if (o.status !== undefined) patch.status = o.status as TaskStatus
  if (o.owner !== undefined) patch.owner = o.owner === false ? null : o.owner
  if (o.subject !== undefined) patch.subject = o.subject
  if (o.description !== undefined) patch.description = o.description
  if (o.activeForm !== undefined) patch.activeForm = o.activeForm
  if (o.addBlocks !== undefined) patch.addBlocks = splitList(o.addBlocks)
  if (o.addBlockedBy !== undefined) patch.addBlockedBy = splitList(o.addBlockedBy)
  if (Object.keys(patch).length === 0) throw new UsageError('nothing to update', { hint: 'see "swarm tasks <team> update --help"' })
  const task = await updateTask(team, id, patch, { by: o.from })
  if (o.json) printJson(task)
  else println(terminalSafe(`updated task ${task.id}: ${describe(task)}`))
}

async function tasksComplete(team: string, id: string, o: JsonOpt & { from: string }): Promise<void> {
  o.from = actor(o.from)
  findMember(await readTeam(team), o.from)
  const { task, unblocked } = await completeTask(team, id, { by: o.from })
  if (o.json) return printJson({ task, unblocked })
  println(terminalSafe(`completed task ${task.id}: ${task.subject}`))
  if (unblocked.length) println(`unblocked: ${unblocked.join(', ')}`)
}

async function tasksDelete(team: string, id: string, o: JsonOpt): Promise<void> {
  await readTeam(team)
  await deleteTask(team, id)
  if (o.json) printJson({ deleted: id })
  else println(`deleted task ${id}`)
}

function describe(t: Task): string {
  return `${t.status}${t.owner ? `, owner ${t.owner}` : ''} — ${t.subject}`
}

/** A failed claim as the error the funnel prints: exit 3 for a missing task, 4 otherwise. */
export function claimError(team: string, id: string, agent: string, f: ClaimFailure): Error {
  switch (f.reason) {
    case 'not_found':
      return new NotFoundError(`team ${team} has no task ${id}`, { hint: `see "swarm tasks ${team} list"` })
    case 'completed':
      return new ConflictError('SWARM_TASK_COMPLETED', `task ${id} is already completed (completed)`)
    case 'already_claimed':
      return new ConflictError('SWARM_TASK_ALREADY_CLAIMED', `task ${id} is already claimed by ${f.owner} (already_claimed)`, {
        hint: 'pick another task',
      })
    case 'blocked':
      return new ConflictError('SWARM_TASK_BLOCKED', `task ${id} is blocked by unfinished task(s) ${f.blockedBy.join(', ')} (blocked)`, {
        hint: 'complete those first',
      })
    case 'agent_busy':
      return new ConflictError('SWARM_AGENT_BUSY', `${agent} already owns unfinished task(s) ${f.busyWith.join(', ')} (agent_busy)`, {
        hint: 'complete those first',
      })
  }
}
