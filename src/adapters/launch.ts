/**
 * Prepares one adapter teammate's launch: its own config dir (`<root>/agent-homes/<team>/<name>`,
 * outside the control plane, never the user's), a `swarm` shim on its PATH so its shell can talk
 * back, the first prompt, and the adapter's argv/env with only the provider variables it names.
 */
import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { BackendUnavailableError } from '../errors.js'
import { agentHomeDir } from '../home/paths.js'
import { ensureDir } from '../util/fs.js'
import { swarmArgv } from '../backends/launch.js'
import { firstPrompt } from './first-prompt.js'
import { checkProviderEnv, enforceProviderEnv } from './provider-check.js'
import { shellQuote } from './template.js'
import type { AdapterContext, AgentAdapter, LaunchPlan, SwarmHookEvent } from './types.js'

type Env = NodeJS.ProcessEnv

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
  /** The CLI's executable (its command's first word), found on the pane's PATH or not. */
  cli: { command: string; path?: string }
}

/** The PATH the agent CLI runs with (its `swarm` shim first), handed through tmux under this name. */
export const AGENT_PATH_ENV = 'SWARM_AGENT_PATH'

export async function planAgentLaunch(adapter: AgentAdapter, input: AgentLaunchInput): Promise<AgentLaunch> {
  // Before anything is written: a CLI that cannot reach a model is refused (named once it is known to be installed).
  const missingEnv = input.resume ? undefined : checkProviderEnv(adapter, input.env, input.name)
  if (missingEnv?.refuse) enforceProviderEnv(adapter, input.env, input.name)
  const configDir = agentHomeDir(input.team, input.name, input.env)
  await ensureDir(configDir)
  const shimDir = await writeSwarmShim(configDir)
  const identity = ['--team', input.team, '--name', input.name, '--agent', adapter.kind]
  const hookArgv = (event: SwarmHookEvent) => [...swarmArgv(), 'hook', event, ...identity]
  const prompt = firstPrompt({ team: input.team, name: input.name, prompt: input.prompt })
  const ctx: AdapterContext = {
    team: input.team,
    name: input.name,
    agentId: `${input.name}@${input.team}`,
    cwd: input.cwd,
    configDir,
    firstPrompt: prompt,
    ...(input.model !== undefined && { model: input.model }),
    ...(input.mode !== undefined && { mode: input.mode }),
    resume: input.resume ?? false,
    hookArgv,
    hookCommand: (event) => hookArgv(event).map(shellQuote).join(' '),
    mcpArgv: [...swarmArgv(), 'mcp', '--team', input.team, '--name', input.name],
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
    '--',
  ]
  const found = findExecutable(plan.argv[0] ?? '', env[AGENT_PATH_ENV].split(path.delimiter), input.cwd)
  // A CLI that is not installed is refused by assertCliInstalled: its missing key is no news then.
  if (missingEnv && found) enforceProviderEnv(adapter, input.env, input.name)
  return { argv: [...wrapper, ...plan.argv], env, configDir, promptInArgv, cli: { command: plan.argv[0] ?? '', ...(found && { path: found }) } }
}

/**
 * Refuses to open a pane for a CLI that is not installed (it would die at once with 127): exit 7
 * naming it and where it was looked for.
 */
export function assertCliInstalled(adapter: AgentAdapter, launch: AgentLaunch): void {
  if (launch.cli.path) return
  throw new BackendUnavailableError(`${adapter.kind}: \`${launch.cli.command}\` is not installed (not on PATH or in SWARM_AGENT_BIN_DIR)`, {
    hint: 'install it, or point SWARM_AGENT_BIN_DIR at the directory that holds it; `swarm doctor` lists the agent CLIs it finds',
  })
}

/** `command` as the pane's shell would find it: a path (relative to `cwd`) or a name in `dirs`. */
function findExecutable(command: string, dirs: string[], cwd: string): string | undefined {
  const candidates = command.includes('/') ? [path.resolve(cwd, command)] : dirs.filter(Boolean).map((d) => path.join(d, command))
  return candidates.find((file) => {
    try {
      fsSync.accessSync(file, fsSync.constants.X_OK)
      return fsSync.statSync(file).isFile()
    } catch {
      return false
    }
  })
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

/** `<configDir>/bin/swarm`: runs this swarm whatever the pane's PATH, for `swarm send` / `swarm tasks`. */
async function writeSwarmShim(configDir: string): Promise<string> {
  const dir = path.join(configDir, 'bin')
  await ensureDir(dir)
  const file = path.join(dir, 'swarm')
  await fs.writeFile(file, `#!/bin/sh\nexec ${swarmArgv().map(shellQuote).join(' ')} "$@"\n`, { mode: 0o700 })
  await fs.chmod(file, 0o700)
  return dir
}
