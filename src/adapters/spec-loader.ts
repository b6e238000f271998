/**
 * The one loader of adapter spec files, a user's (`.claude/swarm-agents/<kind>.yaml`) and a
 * built-in's (`adapters/builtin/<kind>.yaml`): parse and validate (spec.ts), name its kind, build
 * the adapter (spec-adapter.ts). A user's file may not take a reserved kind; a built-in's file must
 * define the kind it is registered as.
 */
import path from 'node:path'
import { CorruptFileError } from '../errors.js'
import { parseSpecText } from '../util/spec-file.js'
import { sha256Hex } from '../util/pin.js'
import { AdapterSpec } from './adapter-spec.js'
import { adapterFromSpec } from './spec-adapter.js'
import { type AdapterSource, type AgentAdapter, SWARM_AGENT_KIND } from './types.js'

/** What kind the file may define: not one of `reserved` (a user's file), or exactly `builtIn`. */
type KindRule = { reserved: readonly string[] } | { builtIn: string }

/** The adapter the bytes of `file` describe, with their sha256 (what a spawn of a user's adapter pins). */
export function specAdapter(file: string, source: AdapterSource, bytes: Buffer, rule: KindRule): AgentAdapter {
  const spec = parseSpecText(file, bytes.toString('utf8'), AdapterSpec)
  const kind = spec.kind ?? path.basename(file).replace(/\.(ya?ml|json)$/, '')
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(kind))
    throw new CorruptFileError(file, `the file name makes the kind ${JSON.stringify(kind)}; set kind: to lowercase letters, digits and -`)
  if (kind === SWARM_AGENT_KIND) throw new CorruptFileError(file, `kind "${SWARM_AGENT_KIND}" is swarm's own agent and cannot be redefined`)
  if ('builtIn' in rule && kind !== rule.builtIn) throw new CorruptFileError(file, `defines kind "${kind}", not the built-in "${rule.builtIn}"`)
  if ('reserved' in rule && rule.reserved.includes(kind))
    throw new CorruptFileError(file, `kind "${kind}" is built in and cannot be redefined (the built-in is used); give this adapter another kind`)
  return adapterFromSpec(spec, { kind, source, file, sha256: sha256Hex(bytes) })
}
