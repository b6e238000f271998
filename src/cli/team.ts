import fs from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { SwarmError, ExitCode, UsageError, errorMessage } from '../errors.js'
import { deleteTeam } from '../teams/delete-team.js'
import { LEAD_NAME, teamConfigPath } from '../teams/paths.js'
import { listTasks } from '../teams/task-store.js'
import { createTeam, listTeams, readTeam } from '../teams/team-store.js'
import { PermissionModeName, type TeamFile } from '../teams/types.js'
import { colorize, colors, printJson, println, table } from './output.js'

export interface TeamCreateOptions {
  agents?: string
  description?: string
  cwd?: string
  model?: string
  mode?: string
  start: boolean
  json?: boolean
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
    .option('--mode <mode>', `permission mode recorded for every teammate (${PermissionModeName.options.join(', ')})`)
    .option('--no-start', 'write the team and its roster, start nothing')
    .option('--json', 'print the team as JSON')
    .action((name: string, opts: TeamCreateOptions) => teamCreate(name, opts))
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
    .command('delete <team>')
    .description("delete a team's files (config, inboxes, tasks, scratchpad)")
    .option('--force', 'delete even with active members or a corrupt config')
    .option('--json', 'print JSON')
    .action((name: string, opts: { force?: boolean; json?: boolean }) => teamDelete(name, opts))
}

export async function teamCreate(name: string, opts: TeamCreateOptions): Promise<void> {
  const agents = splitList(opts.agents)
  if (opts.mode !== undefined && !PermissionModeName.safeParse(opts.mode).success) {
    throw new UsageError(`invalid --mode ${JSON.stringify(opts.mode)}`, { hint: `use one of ${PermissionModeName.options.join(', ')}` })
  }
  const cwd = path.resolve(opts.cwd ?? process.cwd())
  const stat = await fs.stat(cwd).catch(() => undefined)
  if (!stat?.isDirectory()) throw new UsageError(`--cwd ${cwd} is not a directory`)
  const team = await createTeam({
    name,
    description: opts.description,
    cwd,
    members: agents.map((a) => ({
      name: a,
      ...(opts.model !== undefined && { model: opts.model }),
      ...(opts.mode !== undefined && { mode: opts.mode }),
    })),
  })
  if (opts.json) printJson(team)
  else {
    println(`created team ${colors.bold(team.name)} with ${team.members.length} member(s): ${memberNames(team)}`)
    println(`config: ${teamConfigPath(team.name)}`)
  }
  if (opts.start) {
    process.stderr.write(
      'swarm: note: starting the lead and teammates comes with the backends; the team was written and nothing was started (as with --no-start)\n',
    )
  }
}

export async function teamList(opts: { json?: boolean }): Promise<void> {
  const teams = await listTeams()
  if (opts.json) {
    printJson(teams.map((t) => (t.team ? { name: t.name, team: t.team } : { name: t.name, error: t.error })))
  } else if (teams.length === 0) {
    println('no teams')
  } else {
    const rows = [['TEAM', 'MEMBERS', 'DESCRIPTION']]
    for (const t of teams) {
      rows.push(t.team ? [t.name, String(t.team.members.length), t.team.description ?? ''] : [t.name, '?', `(${t.error})`])
    }
    println(table(rows))
  }
  const corrupt = teams.find((t) => t.error?.startsWith('corrupt file'))
  if (corrupt) throw new SwarmError('SWARM_CORRUPT_FILE', corrupt.error!, { exitCode: ExitCode.corrupt, hint: 'inspect it, or remove the team with "swarm team delete <team> --force"' })
}

export async function teamShow(name: string, opts: { json?: boolean }): Promise<void> {
  const team = await readTeam(name)
  if (opts.json) return printJson(team)
  println(`${colors.bold(team.name)}${team.description ? ` — ${team.description}` : ''}`)
  println(`created ${new Date(team.createdAt).toISOString()}, lead ${team.leadAgentId}`)
  println(`config: ${teamConfigPath(team.name)}`)
  println()
  const rows = [['NAME', 'TYPE', 'MODEL', 'BACKEND', 'PANE', 'ACTIVE', 'CWD']]
  for (const m of team.members) {
    rows.push([m.name, m.agentType ?? '', m.model ?? '', m.backendType ?? '', m.tmuxPaneId || '-', activeLabel(m.isActive), m.cwd])
  }
  // Colour is applied after alignment so escape codes do not skew the columns.
  const lines = table(rows).split('\n')
  println(lines[0])
  team.members.forEach((m, i) => println(colorize(m.color, lines[i + 1])))
  println()
  println(await taskSummary(team.name))
}

export async function teamDelete(name: string, opts: { force?: boolean; json?: boolean }): Promise<void> {
  const result = await deleteTeam(name, { force: opts.force })
  if (opts.json) printJson({ deleted: result.team, activeMembers: result.active })
  else println(`deleted team ${result.team}`)
}

async function taskSummary(team: string): Promise<string> {
  try {
    const tasks = await listTasks(team)
    if (!tasks.length) return 'tasks: none'
    const count = (s: string) => tasks.filter((t) => t.status === s).length
    return `tasks: ${tasks.length} (${count('pending')} pending, ${count('in_progress')} in progress, ${count('completed')} completed)`
  } catch (err) {
    // The team itself is readable; a bad task file is named here and by "swarm tasks <team> list".
    return `tasks: unreadable — ${errorMessage(err)}`
  }
}

function memberNames(team: TeamFile): string {
  return team.members.map((m) => (m.name === LEAD_NAME ? m.name : colorize(m.color, m.name))).join(', ')
}

function activeLabel(active: boolean | undefined): string {
  return active === undefined ? '-' : active ? 'yes' : 'no'
}

/** "a, b,,c" → ['a', 'b', 'c'] */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}
