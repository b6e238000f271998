import Anthropic from '@anthropic-ai/sdk'
import { SwarmError, ExitCode } from '../errors.js'

/** Retries for 429/529/5xx, done by the SDK itself (it honours retry-after). */
export const MODEL_MAX_RETRIES = 4

/** True when the environment names a model service (a key or a token). */
export function modelConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN)
}

/**
 * The SDK client from the environment: ANTHROPIC_API_KEY (x-api-key) or ANTHROPIC_AUTH_TOKEN
 * (Bearer), and ANTHROPIC_BASE_URL for a compatible server such as swarm's loopback model.
 */
export function createModelClient(env: NodeJS.ProcessEnv = process.env): Anthropic {
  if (!modelConfigured(env)) {
    throw new SwarmError('SWARM_NO_MODEL', 'no model is configured', {
      exitCode: ExitCode.usage,
      hint: 'set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible server), or try `swarm demo`, which runs offline',
    })
  }
  return new Anthropic({
    apiKey: env.ANTHROPIC_API_KEY || null,
    authToken: env.ANTHROPIC_AUTH_TOKEN || null,
    ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
    maxRetries: MODEL_MAX_RETRIES,
  })
}

/**
 * Loads what a fresh process's first model request would: Node's fetch (its undici, compiled
 * and run at the first call: ~20 ms of CPU here) and its Request/Response/stream classes, through
 * a `data:` URL, which opens no connection. A member does it while idle after its start, so that
 * the first broadcast does not pay it in every recipient at once (issue 25).
 */
export async function warmModelTransport(): Promise<void> {
  await (await fetch('data:text/plain,warm')).text()
}
