import { onStopSignal } from '../process/handlers.js'

/**
 * An AbortSignal that fires on SIGTERM, SIGINT or SIGHUP, so a long-running command (an agent,
 * the leader) can shut down through its own `finally` blocks. A second signal exits at once
 * (process/handlers.ts, which owns the process-wide listeners).
 */
export function shutdownSignal(): { signal: AbortSignal; dispose(): void } {
  const abort = new AbortController()
  const dispose = onStopSignal(() => abort.abort())
  return { signal: abort.signal, dispose }
}
