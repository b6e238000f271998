import { claimSignals } from '../process/process.js'

/**
 * An AbortSignal that fires on SIGTERM, SIGINT or SIGHUP, so a long-running command (an agent,
 * the leader) can shut down through its own `finally` blocks. A second signal exits at once.
 * Persistent listeners (not `once`), and util/process.ts is told to stand aside.
 */
export function shutdownSignal(): { signal: AbortSignal; dispose(): void } {
  claimSignals()
  const abort = new AbortController()
  let received = false
  const handlers = (['SIGTERM', 'SIGINT', 'SIGHUP'] as const).map((sig) => {
    const handler = () => {
      if (received) process.exit(128 + (sig === 'SIGHUP' ? 1 : sig === 'SIGINT' ? 2 : 15))
      received = true
      abort.abort()
    }
    process.on(sig, handler)
    return () => process.off(sig, handler)
  })
  return {
    signal: abort.signal,
    dispose: () => {
      for (const off of handlers) off()
    },
  }
}
