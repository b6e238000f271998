import type { Command } from 'commander'
import { assembleAgent } from '../agent/start.js'
import { UsageError } from '../errors.js'
import { createPermissionLayer } from '../permissions/requests/client.js'
import { validateAgentName, validateName } from '../home/paths.js'
import { updateMember } from '../teams/team-store.js'
import { reportError } from './errors.js'
import { collect } from './options.js'
import { shutdownSignal } from './signals.js'

interface AgentFlags {
  team: string
  name: string
  model?: string
  mode?: string
  agentType?: string
  cwd?: string
  resume?: boolean
  allow: string[]
  deny: string[]
  ask: string[]
  permissionTimeout?: string
}

/** `swarm agent --team T --name N` — the teammate runtime a backend launches. */
export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('run a teammate: a coding agent that lives on its inbox (started by a backend)')
    .requiredOption('--team <team>', 'team name')
    .requiredOption('--name <name>', "this teammate's name")
    .option('--model <model>', 'model (overrides the agent definition)')
    .option('--mode <mode>', 'permission mode')
    .option('--agent-type <type>', 'agent definition to use')
    .option('--cwd <dir>', 'working directory')
    .option('--resume', 'continue the conversation from the transcript')
    .option('--allow <rule>', 'allow rule, e.g. "Bash(npm test:*)" (repeatable)', collect, [])
    .option('--deny <rule>', 'deny rule, e.g. "Read(~/.ssh/**)" (repeatable)', collect, [])
    .option('--ask <rule>', 'ask rule (repeatable)', collect, [])
    .option('--permission-timeout <seconds>', 'deny a permission request nobody answered in time (default: wait)')
    .action((flags: AgentFlags) => runAgentCommand(flags))
}

export async function runAgentCommand(flags: AgentFlags): Promise<void> {
  validateName(flags.team)
  validateAgentName(flags.name)
  const abort = shutdownSignal()
  const permissionTimeoutMs = parseTimeout(flags.permissionTimeout)
  let code: number
  try {
    const { runtime } = await assembleAgent({
      team: flags.team,
      name: flags.name,
      signal: abort.signal,
      permissions: (a) =>
        createPermissionLayer(a, {
          cli: { allow: flags.allow, deny: flags.deny, ask: flags.ask },
          ...(permissionTimeoutMs !== undefined ? { permissionTimeoutMs } : {}),
        }),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.mode ? { mode: flags.mode } : {}),
      ...(flags.agentType ? { agentType: flags.agentType } : {}),
      ...(flags.cwd ? { cwd: flags.cwd } : {}),
      ...(flags.resume ? { resume: true } : {}),
    })
    code = await runtime.run()
    await updateMember(flags.team, flags.name, { isActive: false }).catch(() => {
      // The team may have been deleted while we shut down; nothing to record then.
    })
  } catch (err) {
    code = reportError(err)
  }
  // Watchers and the SDK's keep-alive sockets would hold the process open; the agent is done.
  process.exit(code)
}

function parseTimeout(seconds: string | undefined): number | undefined {
  if (seconds === undefined) return undefined
  const n = Number(seconds)
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--permission-timeout must be a positive number of seconds, got "${seconds}"`)
  return Math.round(n * 1000)
}
