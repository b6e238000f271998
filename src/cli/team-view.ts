import { ExitCode, SwarmError, errorMessage } from '../errors.js'
import { teamConfigPath } from '../home/paths.js'
import { listTasks } from '../tasks/task-store.js'
import { listTeams, readTeam } from '../teams/team-store.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { colorize, colors, printJson, println, table } from '../terminal/output.js'

/** `swarm team list` and `swarm team show`: the teams, and one team's members and tasks. */

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
  if (corrupt)
    throw new SwarmError('SWARM_CORRUPT_FILE', corrupt.error!, {
      exitCode: ExitCode.corrupt,
      hint: 'inspect it, or remove the team with "swarm team delete <team> --force"',
    })
}

export async function teamShow(name: string, opts: { json?: boolean }): Promise<void> {
  const team = await readTeam(name)
  if (opts.json) return printJson(team)
  println(`${colors.bold(team.name)}${team.description ? ` — ${terminalSafe(team.description, { singleLine: true })}` : ''}`)
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
  for (const [i, m] of team.members.entries()) println(colorize(m.color, lines[i + 1]))
  println()
  println(await taskSummary(team.name))
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

function activeLabel(active: boolean | undefined): string {
  return active === undefined ? '-' : active ? 'yes' : 'no'
}
