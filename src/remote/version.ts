import { createRequire } from 'node:module'

/** Set by scripts/bundle.mjs (esbuild `define`) in the CLI bundle; tsc's dist/ reads package.json. */
declare const SWARM_BUILD: { version: string } | undefined

/** This swarm's version: what the remote helper must match (the handshake, the relay's hello). */
export function swarmVersion(): string {
  if (typeof SWARM_BUILD !== 'undefined') return SWARM_BUILD.version
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version
}
