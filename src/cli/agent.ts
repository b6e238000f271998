import type { Command } from 'commander'
import { assembleAgent } from '../agent/start.js'
import { UsageError } from '../errors.js'
import { createPermissionLayer } from '../permissions/requests/client.js'
import { validateAgentName, validateName } from '../home/paths.js'
import { updateMember } from '../teams/team-store.js'
import { reportError } from './errors.js'
import { collect, PLUMBING } from './options.js'
import { shutdownSignal } from './signals.js'
// Installs the agent CLIs' protected config dirs, which its permission checks and Bash sandbox read.
import '../adapters/registry.js'

interface AgentFlags {
  team?: string
  name?: string
  model?: string
  mode?: string
  agentType?: string
  cwd?: string
  resume?: boolean
  allow: string[]
  deny: string[]
  ask: string[]
  permissionTimeout?: string
  // Claude Code's teammate argv (a Claude Code lead with CLAUDE_CODE_TEAMMATE_COMMAND starts us so).
  agentId?: string
  agentName?: string
  teamName?: string
  agentColor?: string
  parentSessionId?: string
  leadVerifyKey?: string
  permissionMode?: string
  planModeRequired?: boolean
}

/** Claude Code's permission modes swarm has no own name for. */
const CLAUDE_MODES: Record<string, string> = { auto: 'default' }

/**
 * `swarm agent --team T --name N` — the teammate runtime a backend launches. It also takes the
 * argv a Claude Code lead gives its teammates (`--agent-id n@t --agent-name n --team-name t
 * --lead-verify-key …`), so bin/swarm-claude-teammate.js can be its CLAUDE_CODE_TEAMMATE_COMMAND;
 * flags of Claude Code's that swarm has no use for are ignored.
 */
export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .helpGroup(PLUMBING)
    .description('run a teammate: a coding agent that lives on its inbox (started by a backend)')
    .option('--team <team>', 'team name (or --team-name)')
    .option('--name <name>', "this teammate's name (or --agent-name)")
    .option('--model <model>', 'model (overrides the agent definition)')
    .option('--mode <mode>', 'permission mode')
    .option('--agent-type <type>', 'agent definition to use')
    .option('--cwd <dir>', 'working directory')
    .option('--resume', 'continue the conversation from the transcript')
    .option('--allow <rule>', 'allow rule, e.g. "Bash(npm test:*)" (repeatable)', collect, [])
    .option('--deny <rule>', 'deny rule, e.g. "Read(~/.ssh/**)" (repeatable)', collect, [])
    .option('--ask <rule>', 'ask rule (repeatable)', collect, [])
    .option('--permission-timeout <seconds>', 'deny a permission request nobody answered in time (default: wait)')
    .option('--agent-id <id>', "Claude Code's teammate argv: <name>@<team>")
    .option('--agent-name <name>', "Claude Code's teammate argv: the name")
    .option('--team-name <team>', "Claude Code's teammate argv: the team")
    .option('--agent-color <color>', "Claude Code's teammate argv: the colour (the team file's is used)")
    .option('--parent-session-id <uuid>', "Claude Code's teammate argv: the lead's session")
    .option('--lead-verify-key <ms.key>', "Claude Code's teammate argv: the lead's public key, checks lead_sig")
    .option('--permission-mode <mode>', "Claude Code's teammate argv: the permission mode")
    .option('--plan-mode-required', "Claude Code's teammate argv: start in plan mode")
    .allowUnknownOption()
    .action((flags: AgentFlags) => runAgentCommand(flags))
}

/** The identity and mode from either argv; UsageError when team or name is missing. */
export function agentIdentity(flags: AgentFlags): { team: string; name: string; mode?: string } {
  const fromId = flags.agentId?.includes('@') ? flags.agentId : undefined
  const team = flags.team ?? flags.teamName ?? fromId?.slice(fromId.lastIndexOf('@') + 1)
  const name = flags.name ?? flags.agentName ?? fromId?.slice(0, fromId.lastIndexOf('@'))
  if (!team || !name)
    throw new UsageError('swarm agent needs --team and --name', { hint: 'or the Claude Code teammate argv: --agent-id <name>@<team>' })
  const claudeMode = flags.planModeRequired ? 'plan' : flags.permissionMode
  const mode = flags.mode ?? (claudeMode !== undefined ? (CLAUDE_MODES[claudeMode] ?? claudeMode) : undefined)
  return { team: validateName(team), name: validateAgentName(name), ...(mode !== undefined && { mode }) }
}

export async function runAgentCommand(flags: AgentFlags): Promise<void> {
  const identity = agentIdentity(flags)
  const abort = shutdownSignal()
  const permissionTimeoutMs = parseTimeout(flags.permissionTimeout)
  let code: number
  try {
    const { runtime } = await assembleAgent({
      team: identity.team,
      name: identity.name,
      signal: abort.signal,
      permissions: (a) =>
        createPermissionLayer(a, {
          cli: { allow: flags.allow, deny: flags.deny, ask: flags.ask },
          ...(permissionTimeoutMs !== undefined ? { permissionTimeoutMs } : {}),
        }),
      ...(flags.model ? { model: flags.model } : {}),
      ...(identity.mode ? { mode: identity.mode } : {}),
      ...(flags.leadVerifyKey ? { leadVerifyKey: flags.leadVerifyKey } : {}),
      ...(flags.agentType ? { agentType: flags.agentType } : {}),
      ...(flags.cwd ? { cwd: flags.cwd } : {}),
      ...(flags.resume ? { resume: true } : {}),
    })
    code = await runtime.run()
    await updateMember(identity.team, identity.name, { isActive: false }).catch(() => {
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
