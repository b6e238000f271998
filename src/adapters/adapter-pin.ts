/**
 * A user-defined adapter is pinned at spawn: its file and the sha256 of its bytes go into the
 * member's entry of the team config. A running teammate's hooks and pane wrapper load only that
 * file with that hash, so editing or dropping an adapter file cannot change a running teammate.
 */
import fs from 'node:fs/promises'
import { z } from 'zod'
import { ConflictError } from '../errors.js'
import { sha256Hex } from '../util/pin.js'
import { adapterFromBytes, builtInAdapter } from './registry.js'
import { type AdapterSource, type AgentAdapter, SWARM_AGENT_KIND } from './types.js'

/** The member entry's field holding its pin (Claude Code ignores unknown fields). */
export const ADAPTER_PIN_FIELD = 'swarmAdapterPin'

export const AdapterPin = z.object({
  kind: z.string(),
  file: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  source: z.enum(['user', 'project']),
})
export type AdapterPin = z.infer<typeof AdapterPin>

/** The pin to record for a member running `adapter`; undefined for a built-in. */
export function pinOf(adapter: AgentAdapter | undefined): AdapterPin | undefined {
  if (!adapter || adapter.source === 'built-in' || adapter.file === undefined || adapter.sha256 === undefined) return undefined
  return { kind: adapter.kind, file: adapter.file, sha256: adapter.sha256, source: adapter.source as Exclude<AdapterSource, 'built-in'> }
}

/** A user-defined adapter that cannot be loaded as pinned: its teammate's permission hook denies. */
export class AdapterPinError extends ConflictError {
  constructor(message: string) {
    super('SWARM_ADAPTER_PIN', message, { hint: 'respawn the teammate (swarm kill, then swarm spawn) to use the adapter file as it is now' })
  }
}

/**
 * The adapter a running member uses: a built-in by its kind; a user-defined one only from the
 * file pinned in `member` with the same hash — otherwise AdapterPinError, never another adapter.
 */
export async function pinnedAdapter(kind: string | undefined, member: Record<string, unknown> | undefined): Promise<AgentAdapter | undefined> {
  if (kind === undefined || kind === SWARM_AGENT_KIND) return undefined
  const builtIn = builtInAdapter(kind)
  if (builtIn) return builtIn
  const parsed = AdapterPin.safeParse(member?.[ADAPTER_PIN_FIELD])
  const who = typeof member?.name === 'string' ? member.name : 'this teammate'
  if (!parsed.success || parsed.data.kind !== kind) throw new AdapterPinError(`adapter ${kind} was not pinned when ${who} was spawned`)
  const pin = parsed.data
  const bytes = await fs.readFile(pin.file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new AdapterPinError(`adapter file ${pin.file} of ${who} is gone since its spawn`)
    throw new AdapterPinError(`adapter file ${pin.file} of ${who} cannot be read (${err.code ?? err.message})`)
  })
  if (sha256Hex(bytes) !== pin.sha256) throw new AdapterPinError(`adapter file ${pin.file} of ${who} changed since its spawn`)
  const adapter = adapterFromBytes(pin.file, pin.source, bytes)
  if (adapter.kind !== kind) throw new AdapterPinError(`adapter file ${pin.file} of ${who} defines ${adapter.kind}, not ${kind}`)
  return adapter
}
