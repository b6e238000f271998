import http from 'node:http'
import type { AddressInfo } from 'node:net'
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
 * Does once what a fresh process's first model request pays for: Node's fetch (its undici,
 * compiled and run at the first call), a connection and its HTTP parser (llhttp, WebAssembly,
 * instantiated at the first connection), the Request/Response/stream classes — ~35 ms of CPU
 * here, of a first broadcast's ~55 per recipient (bench:scale, issue 25) — through one request
 * to a server of its own on the loopback interface, closed right after: nothing leaves the host.
 */
export async function warmModelTransport(): Promise<void> {
  const server = http.createServer((_, res) => res.end('warm'))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  try {
    const { port } = server.address() as AddressInfo
    await (await fetch(`http://127.0.0.1:${port}/`)).text()
  } finally {
    server.closeAllConnections()
    server.close()
  }
}
