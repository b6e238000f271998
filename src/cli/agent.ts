import type { Command } from 'commander'
import { assembleAgent } from '../agent/start.js'
import { validateAgentName, validateName } from '../teams/paths.js'
import { updateMember } from '../teams/team-store.js'

interface AgentFlags {
  team: string
  name: string
  model?: string
  mode?: string
  agentType?: string
  cwd?: string
  resume?: boolean
}

/** `swarm agent --team T --name N` — the teammate runtime a backend launches. */
export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('run a teammate: a coding agent that lives on its inbox (started by a backend)')
    .requiredOption('--team <team>', 'team name')
    .requiredOption('--name <name>', 'this teammate\'s name')
    .option('--model <model>', 'model (overrides the agent definition)')
    .option('--mode <mode>', 'permission mode')
    .option('--agent-type <type>', 'agent definition to use')
    .option('--cwd <dir>', 'working directory')
    .option('--resume', 'continue the conversation from the transcript')
    .action((flags: AgentFlags) => runAgentCommand(flags))
}

export async function runAgentCommand(flags: AgentFlags): Promise<void> {
  validateName(flags.team)
  validateAgentName(flags.name)
  const abort = new AbortController()
  const onSignal = () => abort.abort()
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
  process.once('SIGHUP', onSignal)
  const { runtime } = await assembleAgent({
    team: flags.team,
    name: flags.name,
    signal: abort.signal,
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.mode ? { mode: flags.mode } : {}),
    ...(flags.agentType ? { agentType: flags.agentType } : {}),
    ...(flags.cwd ? { cwd: flags.cwd } : {}),
    ...(flags.resume ? { resume: true } : {}),
  })
  const code = await runtime.run()
  await updateMember(flags.team, flags.name, { isActive: false }).catch(() => {
    // The team may have been deleted while we shut down; nothing to record then.
  })
  // Watchers and the SDK's keep-alive sockets would hold the process open; the agent is done.
  process.exit(code)
}
