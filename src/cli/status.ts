import type { Command } from 'commander'
import type { MemberStatus, TeamStatus } from '../backends/status.js'
import { paintAgent } from '../util/colors.js'
import { colors, printJson, println, table } from './output.js'

export interface StatusCommandOptions {
  json?: boolean
  watch?: boolean
}

/** How often `--watch` refreshes. */
const WATCH_MS = 1_000

/** `swarm status <team>` */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description("each member's backend, pane and process state (alive / exited with its code / dead)")
    .argument('<team>', 'team name')
    .option('--json', 'print JSON')
    .option('--watch', 'refresh every second until Ctrl-C')
    .action((team: string, opts: StatusCommandOptions) => runStatus(team, opts))
}

export async function runStatus(team: string, opts: StatusCommandOptions): Promise<void> {
  const { teamStatus } = await import('../backends/status.js')
  for (;;) {
    const status = await teamStatus(team)
    if (opts.json) {
      if (opts.watch) process.stdout.write(JSON.stringify(status) + '\n')
      else printJson(status)
    } else {
      if (opts.watch) process.stdout.write('\x1b[H\x1b[2J')
      println(formatStatus(status))
    }
    if (!opts.watch) return
    await new Promise((r) => setTimeout(r, WATCH_MS))
  }
}

export function formatStatus(status: TeamStatus): string {
  const rows = [['NAME', 'BACKEND', 'PANE', 'STATE']]
  for (const m of status.members) rows.push([m.name, m.backend ?? '-', m.pane || '-', stateText(m)])
  // Colour after aligning: escape codes would throw the column widths off.
  const lines = table(rows).split('\n')
  return [
    `team ${status.team}`,
    lines[0],
    ...status.members.map((m, i) => {
      const line = lines[i + 1]
      return paintAgent(colors, m.color, m.name) + line.slice(m.name.length)
    }),
  ].join('\n')
}

function stateText(m: MemberStatus): string {
  switch (m.state) {
    case 'alive':
      return m.pid ? `alive (pid ${m.pid})` : 'alive'
    case 'exited':
      return `exited (code ${m.exitCode})`
    case 'dead':
      return `dead: ${m.reason}`
    case 'unknown':
      return `unknown: ${m.reason}`
  }
}
