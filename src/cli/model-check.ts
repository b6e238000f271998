import { modelConfigured } from '../agent/client.js'
import { UsageError } from '../errors.js'

/**
 * The one check that a team about to start has a model to think with (`team create`, `team
 * resume`; `doctor` reports the same condition): only swarm's own agents need it, agent CLIs bring
 * their own provider, and a team with no teammate still has its lead agent.
 */

/** How to get a model: a key, or the scripted one offline. */
export const MODEL_FIX =
  'export ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible server), or run `swarm model serve --scenario FILE` and export what it prints (docs/offline.md); `swarm demo` runs offline'

/** Throws a usage error (exit 2) when a member of `kinds` (undefined: swarm's own agent) would start without a model. */
export function assertTeamModel(kinds: ReadonlyArray<string | undefined>, env: NodeJS.ProcessEnv, alternative?: string): void {
  // 'swarm': adapters/registry.ts SWARM_AGENT_KIND (the registry is loaded lazily, past this check).
  const swarmAgents = kinds.length === 0 || kinds.some((k) => k === undefined || k === 'swarm')
  if (!swarmAgents || modelConfigured(env)) return
  throw new UsageError('no model is configured, so the teammates could not think', {
    hint: alternative ? `${MODEL_FIX}; or ${alternative}` : MODEL_FIX,
  })
}
