/**
 * The one check every agent-CLI teammate passes before anything is written for it (roster entry,
 * agent home, team): provider variables it cannot start without (exit 2), the adapter's own
 * refusals (a name the CLI cannot address, exit 2), and its binary (exit 7, binary.ts).
 */
import { UsageError } from '../errors.js'
import { requireAgentBinary } from './binary.js'
import { checkProviderEnv } from './provider-check.js'
import { resolveAdapter } from './registry.js'
import type { AgentAdapter } from './types.js'
import type { Env } from '../home/env.js'

export interface PreflightInput {
  team: string
  name: string
  env: Env
  /** False: the binary is not looked for (a roster written with `--no-start`, started later elsewhere). */
  binary?: boolean
}

export function preflightAdapter(adapter: AgentAdapter, o: PreflightInput): void {
  const problem = checkProviderEnv(adapter, o.env, o.name)
  if (problem?.refuse) throw new UsageError(problem.message, { hint: problem.hint })
  adapter.preflight?.({ team: o.team, name: o.name, env: o.env })
  if (o.binary === false) return
  requireAgentBinary(adapter, o.env)
  // What a launcher command (`npx -y mycli`) really runs: missing, it would start and exit at once.
  for (const binary of adapter.requiredBinaries ?? []) requireAgentBinary({ kind: adapter.kind, binary }, o.env)
}

/** The same for the adapter `kind` names (looked up from `cwd`, the lead's); nothing for swarm's own agent. */
export async function preflightAgent(kind: string | undefined, o: PreflightInput & { cwd: string }): Promise<void> {
  const adapter = await resolveAdapter(kind, { cwd: o.cwd, env: o.env })
  if (adapter) preflightAdapter(adapter, o)
}
