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
  program
    .command('layout <team>')
    .description("lay the team's tmux panes out again for its window's size (its windows' resize hook runs it)")
    .option('--socket <path>', "the tmux server's socket (default: the team's)")
    .action((team: string, opts: { socket?: string }) => layoutCommand(team, opts))
}

/** Plumbing for the resize hook: prints nothing (tmux would show it over your pane). */
export async function layoutCommand(team: string, opts: { socket?: string }): Promise<void> {
  const [{ validateName }, { relayout }] = await Promise.all([import('../home/paths.js'), import('../backends/registry.js')])
  validateName(team)
  // With --socket (the hook) the server is known and no team file is read: the hook runs in the tmux server's environment.
  await relayout('tmux', team, opts.socket, process.env)
}
export async function paneCommand(what: 'hide' | 'unhide', team: string, name: string): Promise<void> {
  const { hideTeammate, showTeammate } = await import('../supervisor/visibility.js')
  const { validateAgentName, validateName } = await import('../home/paths.js')
  validateName(team)
  validateAgentName(name)
  await (what === 'hide' ? hideTeammate(team, name) : showTeammate(team, name))
  println(`${name} ${what === 'hide' ? 'hidden' : 'shown'}`)
}
