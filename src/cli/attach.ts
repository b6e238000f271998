import type { Command } from 'commander'
import { NotFoundError } from '../errors.js'
import { println } from '../terminal/output.js'

/** `swarm attach <team>` */
export function registerAttachCommand(program: Command): void {
  program
    .command('attach')
    .description("attach to the team's tmux session (swarm-<team> on the swarm server); with a name, to that teammate's pane")
    .argument('<team>', 'team name')
    .argument('[name]', "a teammate: its window (the team's, or a page <team>+N) shown and its pane selected")
    .action((team: string, name: string | undefined) => runAttach(team, name))
}

/** Attaches through the executor of the team's backend (a hosted team: the one showing its views; a team with no record of one: the first standalone backend's). */
export async function runAttach(team: string, name?: string): Promise<void> {
  const [{ validateName }, registry, { hostedViews, teamBackend }, teams] = await Promise.all([
    import('../home/paths.js'),
    import('../backends/registry.js'),
    import('../backends/team-backend.js'),
    import('../teams/team-store.js'),
  ])
  validateName(team)
  if (name !== undefined) validateName(name)
  const env = process.env
  const config = (await teams.teamExists(team, env)) ? await teams.readTeam(team, env) : undefined
  // A hosted team runs in-process inside a leader that sits in a pane, its teammates' views beside it: attach to those panes.
  const type = (config && (hostedViews(config) ?? teamBackend(config))) ?? registry.paneBackends().find((b) => b.standalone)?.type
  if (type === undefined || registry.findBackend(type)?.kind !== 'pane')
    throw new NotFoundError(`team ${team} runs in-process, inside its leader: there are no panes to attach to`)
  const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY)
  process.exitCode = await registry.createExecutor(type, { env }).attach(team, { terminal, notice: println }, name)
}
