import type { Command } from 'commander'

/** `swarm team …` — filled in by the team store work. */
export function registerTeamCommands(program: Command): void {
  program.command('team').description('create, list, show, delete and resume teams')
}
