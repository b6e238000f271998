import type { Command } from 'commander'
import { println } from '../terminal/output.js'

/** `swarm hide|unhide <team> <name>` — a teammate's pane out of sight and back (tmux). */
export function registerPaneCommands(program: Command): void {
  program
    .command('hide <team> <name>')
    .description("move a teammate's tmux pane out of the team window (it keeps running)")
    .action((team: string, name: string) => paneCommand('hide', team, name))
  program
    .command('unhide <team> <name>')
    .description("bring a hidden teammate's pane back next to the leader")
    .action((team: string, name: string) => paneCommand('unhide', team, name))
}

export async function paneCommand(what: 'hide' | 'unhide', team: string, name: string): Promise<void> {
  const { hideTeammate, showTeammate } = await import('../supervisor/visibility.js')
  const { validateAgentName, validateName } = await import('../home/paths.js')
  validateName(team)
  validateAgentName(name)
  await (what === 'hide' ? hideTeammate(team, name) : showTeammate(team, name))
  println(`${name} ${what === 'hide' ? 'hidden' : 'shown'}`)
}
