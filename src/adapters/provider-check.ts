/**
 * Whether a teammate's agent CLI can reach a model with the spawner's environment, from its
 * adapter's `requiredEnv` declaration: none of the variables set is a one-line warning, or a
 * UsageError (exit 2) for an adapter that declares it cannot start without one.
 */
import { UsageError } from '../errors.js'
import type { AgentAdapter } from './types.js'

export interface ProviderCheck {
  refuse: boolean
  /** What is missing and what to do, one line (no `swarm:` prefix). */
  message: string
  hint: string
}

/** Undefined when the adapter needs no variable or one of them is set (non-empty). */
export function checkProviderEnv(
  adapter: Pick<AgentAdapter, 'kind' | 'requiredEnv'>,
  env: NodeJS.ProcessEnv,
  name: string,
): ProviderCheck | undefined {
  const required = adapter.requiredEnv
  if (!required || required.anyOf.some((v) => env[v])) return undefined
  const vars = required.anyOf.join(required.anyOf.length > 2 ? ', ' : ' or ')
  const refuse = required.without === 'refuse'
  return {
    refuse,
    message: refuse
      ? `${adapter.kind} cannot start without ${vars}, and none is set`
      : `${vars} ${required.anyOf.length > 1 ? 'are' : 'is'} not set: the ${adapter.kind} teammate ${name} will wait at its sign-in screen`,
    hint: `export ${required.anyOf[0]} before spawning${refuse ? '' : `, or sign in from its pane (swarm attach)`}`,
  }
}

/** Applies checkProviderEnv: throws on a refusal, writes the warning line otherwise. */
export function enforceProviderEnv(
  adapter: Pick<AgentAdapter, 'kind' | 'requiredEnv'>,
  env: NodeJS.ProcessEnv,
  name: string,
  warn = (line: string) => process.stderr.write(line),
): void {
  const problem = checkProviderEnv(adapter, env, name)
  if (!problem) return
  if (problem.refuse) throw new UsageError(problem.message, { hint: problem.hint })
  warn(`swarm: warning: ${problem.message} — ${problem.hint}\n`)
}
