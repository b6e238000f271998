import type { Command } from 'commander'
import { PLUMBING } from './options.js'
import { UsageError } from '../errors.js'

/** `swarm mcp --team T --name N`: the team tools as an MCP stdio server (registered with agent CLIs by their adapters). */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .helpGroup(PLUMBING)
    .description('serve SendMessage, TaskList, TaskGet, TaskUpdate, TaskCreate to an agent CLI over MCP (stdio)')
    .option('--team <team>', 'the team (default $SWARM_TEAM)')
    .option('--name <name>', 'the member acting (default $SWARM_AGENT_NAME)')
    .action((opts: { team?: string; name?: string }) => mcp(opts))
}

async function mcp(opts: { team?: string; name?: string }): Promise<void> {
  const team = opts.team ?? process.env.SWARM_TEAM
  const name = opts.name ?? process.env.SWARM_AGENT_NAME
  if (!team || !name) throw new UsageError('swarm mcp needs --team and --name (or SWARM_TEAM and SWARM_AGENT_NAME)')
  const [{ serveMcp }, { readTeam, findMember }] = await Promise.all([import('../adapters/mcp-server.js'), import('../teams/team-store.js')])
  findMember(await readTeam(team), name)
  await serveMcp({ team, name, cwd: process.cwd(), env: process.env, input: process.stdin, output: process.stdout })
}
