import type * as ChildProcessModule from 'node:child_process'
import { createRequire } from 'node:module'

let loaded: typeof ChildProcessModule | undefined

/**
 * node:child_process, loaded at its first use, synchronously: a `swarm send` (which only reads
 * /proc) loads none, and a teammate none before its first tool call — 64 of them start at once
 * (issue 25, bench:cli, bench:agent-start). launch.ts's spawns and table.ts's `ps` both come here.
 */
export function childProcess(): typeof ChildProcessModule {
  loaded ??= createRequire(import.meta.url)('node:child_process') as typeof ChildProcessModule
  return loaded
}
