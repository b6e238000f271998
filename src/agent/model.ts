/** The model used when nothing else names one. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6'

export interface ModelSources {
  /** `--model` given to this spawn. */
  spawnModel?: string
  /** `model:` of the agent definition ('inherit' defers to the leader). */
  definitionModel?: string
  /** The leader's model. */
  leaderModel?: string
  env?: NodeJS.ProcessEnv
}

/**
 * docs/architecture.md §8: SWARM_SUBAGENT_MODEL_FORCE wins; else --model > the definition's model >
 * SWARM_SUBAGENT_MODEL > the leader's model > the default.
 */
export function resolveModel(sources: ModelSources): { model: string; source: string } {
  const env = sources.env ?? process.env
  const pick: Array<[string | undefined, string]> = [
    [env.SWARM_SUBAGENT_MODEL_FORCE, 'SWARM_SUBAGENT_MODEL_FORCE'],
    [sources.spawnModel, '--model'],
    [sources.definitionModel === 'inherit' ? undefined : sources.definitionModel, 'agent definition'],
    [env.SWARM_SUBAGENT_MODEL, 'SWARM_SUBAGENT_MODEL'],
    [sources.leaderModel, 'leader'],
  ]
  for (const [model, source] of pick) if (model?.trim()) return { model: expandAlias(model.trim()), source }
  return { model: DEFAULT_MODEL, source: 'default' }
}

const ALIASES: Record<string, string> = {
  sonnet: 'claude-sonnet-4-6',
  opus: 'claude-opus-4-7',
  haiku: 'claude-haiku-4-5',
}

/** Claude Code's short names (`sonnet`, `opus`, `haiku`) to model ids. */
export function expandAlias(model: string): string {
  return ALIASES[model] ?? model
}
