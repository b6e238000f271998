/**
 * Prepares one adapter teammate's launch: its own config dir (`<root>/agent-homes/<team>/<name>`,
 * outside the control plane, never the user's), a `swarm` shim on its PATH so its shell can talk
 * back (not for an adapter whose `teamChannel` is `mcp`), the first prompt, and the adapter's
 * argv/env with only the provider variables it names.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { agentHomeDir } from '../home/paths.js'
import { ensureDir } from '../util/fs.js'
import { swarmArgv } from '../backends/teammate-launch.js'
import { firstPrompt } from './first-prompt.js'
import { relayEndpointFile } from './relay-frames.js'
import { enforceProviderEnv } from './provider-check.js'
import { shellQuote } from './template.js'
import type { AdapterContext, AgentAdapter, LaunchPlan, SwarmHookEvent } from './types.js'
import type { Env } from '../home/env.js'

export interface AgentLaunchInput {
  team: string
  name: string
  cwd: string
  /** The initial instructions (spawn --prompt, the member's prompt). */
  prompt?: string
  model?: string
  mode?: string
  resume?: boolean
  env: Env
}

/** What the spawner needs: the pane's argv and env, and whether the first prompt is already in it. */
export interface AgentLaunch extends LaunchPlan {
  configDir: string
  /** False when the adapter's command has no {{prompt}}: the prompt must then be delivered. */
  promptInArgv: boolean
}

/** The PATH the agent CLI runs with (its `swarm` shim first), handed through tmux under this name. */
export const AGENT_PATH_ENV = 'SWARM_AGENT_PATH'

export async function planAgentLaunch(adapter: AgentAdapter, input: AgentLaunchInput): Promise<AgentLaunch> {
  // The preflight (preflight.ts, run by spawnTeammates before anything is written) refused a CLI
  // that is missing or cannot start without its key; one that can but has no key is named here.
  if (!input.resume) enforceProviderEnv(adapter, input.env, input.name)
  const configDir = agentHomeDir(input.team, input.name, input.env)
  await ensureDir(configDir)
  // A CLI in swarm's sandbox cannot see (all) the team's files: its swarm commands go through the relay.
  const confinement = adapter.confinement ?? 'swarm'
  const confined = confinement === 'swarm'
  const relayed = confined || confinement === 'launcher'
  const teamSwarm = (args: string[]) => (relayed ? [...swarmArgv(), 'relay', relayEndpointFile(configDir), '--', ...args] : [...swarmArgv(), ...args])
  // Its shell's `swarm`, unless the adapter talks to the team through swarm's MCP tools alone.
  const channel = adapter.teamChannel ?? 'shell'
  const shimDir = channel === 'shell' ? await writeSwarmShim(configDir, teamSwarm([])) : undefined
  const identity = ['--team', input.team, '--name', input.name, '--agent', adapter.kind]
  const hookArgv = (event: SwarmHookEvent) => teamSwarm(['hook', event, ...identity])
  const prompt = firstPrompt({ team: input.team, name: input.name, prompt: input.prompt, channel })
  const ctx: AdapterContext = {
    team: input.team,
    name: input.name,
    agentId: `${input.name}@${input.team}`,
    cwd: input.cwd,
    configDir,
    firstPrompt: prompt,
    ...(input.prompt !== undefined && { prompt: input.prompt }),
    ...(input.model !== undefined && { model: input.model }),
    ...(input.mode !== undefined && { mode: input.mode }),
    resume: input.resume ?? false,
    hookArgv,
    hookCommand: (event) => hookArgv(event).map(shellQuote).join(' '),
    mcpArgv: teamSwarm(['mcp', '--team', input.team, '--name', input.name]),
    env: input.env,
  }
  const plan = await adapter.prepare(ctx)
  const env = {
    ...providerEnv(adapter.providerEnv, input.env),
    ...plan.env,
    // tmux 3.3a gives a new pane the PATH of its client whatever `-e PATH=` says: the wrapper puts this one back.
    [AGENT_PATH_ENV]: [shimDir, input.env.SWARM_AGENT_BIN_DIR, plan.env.PATH ?? input.env.PATH ?? ''].filter(Boolean).join(path.delimiter),
    SWARM_AGENT_KIND: adapter.kind,
  }
  const promptInArgv = plan.argv.some((a) => a.includes(prompt))
  // The pane runs `swarm agent-cli … -- <cli>`: the CLI in the foreground, its courier beside it.
  const wrapper = [
    ...swarmArgv(),
    'agent-cli',
    '--team',
    input.team,
    '--name',
    input.name,
    '--agent',
    adapter.kind,
    ...(promptInArgv ? ['--prompt-in-argv'] : []),
    ...(confined ? ['--sandbox', ...[...(shimDir ? [shimDir] : []), ...(plan.readOnly ?? [])].flatMap((p) => ['--read-only', p])] : []),
    '--',
  ]
  return { argv: [...wrapper, ...plan.argv], env, configDir, promptInArgv, ...(plan.inboxPrompt !== undefined && { inboxPrompt: plan.inboxPrompt }) }
}

/** The spawner's variables an adapter forwards: exact names, or prefixes written `NAME_*`. */
export function providerEnv(names: readonly string[], env: Env): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue
    if (names.some((n) => (n.endsWith('*') ? k.startsWith(n.slice(0, -1)) : k === n))) out[k] = v
  }
  return out
}

/**
 * `<configDir>/bin/swarm`: runs `swarm` (`argv`: this swarm, through the relay when the CLI is in
 * swarm's sandbox) whatever the pane's PATH, for `swarm send` / `swarm tasks` from its shell.
 */
async function writeSwarmShim(configDir: string, argv: string[]): Promise<string> {
  const dir = path.join(configDir, 'bin')
  await ensureDir(dir)
  const file = path.join(dir, 'swarm')
  await fs.writeFile(file, `#!/bin/sh\nexec ${argv.map(shellQuote).join(' ')} "$@"\n`, { mode: 0o700 })
  await fs.chmod(file, 0o700)
  return dir
}
