import type { Command } from 'commander'
import { PLUMBING } from './options.js'
import { UsageError } from '../errors.js'

interface AgentCliOpts {
  team: string
  name: string
  agent: string
  promptInArgv?: boolean
  sandbox?: boolean
  readOnly?: string[]
}

/** `swarm agent-cli --team T --name N --agent K [--prompt-in-argv] -- <cli argv…>`: a CLI teammate's pane (started by spawn). */
export function registerAgentCliCommand(program: Command): void {
  program
    .command('agent-cli')
    .helpGroup(PLUMBING)
    .description('run an agent CLI as a teammate in this pane: delivers its inbox, records its state (started by spawn --agent)')
    .requiredOption('--team <team>', 'team name')
    .requiredOption('--name <name>', 'teammate name')
    .requiredOption('--agent <kind>', 'its adapter')
    .option('--prompt-in-argv', 'its first prompt is in the argv')
    .option('--sandbox', "run the CLI in swarm's OS sandbox, reaching the team through a relay")
    .option('--read-only <path>', 'read-only inside the sandbox (repeatable)', (p: string, all: string[] = []) => [...all, p])
    .argument('<argv...>', 'the CLI and its arguments (after --)')
    .action((argv: string[], opts: AgentCliOpts) => agentCli(argv, opts))
}

async function agentCli(argv: string[], opts: AgentCliOpts): Promise<void> {
  const [{ pinnedAdapter }, { runAgentCli }, { readTeam }] = await Promise.all([
    import('../adapters/adapter-pin.js'),
    import('../adapters/agent-cli.js'),
    import('../teams/team-store.js'),
  ])
  const team = await readTeam(opts.team)
  // The adapter as pinned at spawn (a changed user-defined file refuses to start, exit 4).
  const adapter = await pinnedAdapter(
    opts.agent,
    team.members.find((m) => m.name === opts.name),
  )
  if (!adapter) throw new UsageError(`--agent ${opts.agent} is swarm's own agent; run "swarm agent" instead`)
  process.exitCode = await runAgentCli({
    team: opts.team,
    name: opts.name,
    adapter,
    argv,
    promptInArgv: opts.promptInArgv === true,
    env: process.env,
    ...(opts.sandbox && { sandbox: { readOnly: opts.readOnly ?? [] } }),
  })
}
