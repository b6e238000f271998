/**
 * The one list of agent adapters: the built-ins, then user-defined adapter files — `<root>/
 * swarm-agents/*.yaml` (user), then `<cwd>/.claude/swarm-agents/*.yaml` (project), a later file
 * replacing an earlier one of the same kind. A file never replaces a built-in kind: it is refused
 * (a diagnostic) and the built-in stays. Only this file imports the built-in adapters, and every
 * list of them is derived here: kinds for --help, the protected config dirs it installs into the
 * sandbox layer when it loads, the probe home's variables, each kind's shell tools.
 */
import { sha256Hex } from '../util/pin.js'
import fs from 'node:fs/promises'
import path from 'node:path'
import { CorruptFileError, NotFoundError, UsageError } from '../errors.js'
import { rootDir } from '../home/paths.js'
import { claudeAdapter } from './claude.js'
import { codexAdapter } from './codex.js'
import { geminiAdapter } from './gemini.js'
import { opencodeAdapter } from './opencode.js'
import { piAdapter } from './pi.js'
import { qwenAdapter } from './qwen.js'
import { AdapterSpec } from './spec.js'
import { adapterFromSpec } from './spec-adapter.js'
import type { AdapterSource, AgentAdapter } from './types.js'
import { parseSpecText } from '../util/spec-file.js'
import { installAgentConfigDirs } from '../sandbox/protected.js'

/** `--agent swarm` (and no --agent at all): swarm's own agent runtime, which needs no adapter. */
export const SWARM_AGENT_KIND = 'swarm'

/** The built-ins, then those registered at run time (registerAdapter). */
const BUILT_INS: AgentAdapter[] = [claudeAdapter, codexAdapter, geminiAdapter, opencodeAdapter, piAdapter, qwenAdapter]
installConfigDirsOf(BUILT_INS)

/** The kinds swarm defines itself (and those registered); no adapter file may take one of them. */
export function builtInKinds(): string[] {
  return [SWARM_AGENT_KIND, ...BUILT_INS.map((a) => a.kind)]
}

/** The built-in adapter of `kind`; undefined for swarm's own agent and for any other kind. */
export function builtInAdapter(kind: string): AgentAdapter | undefined {
  return BUILT_INS.find((a) => a.kind === kind)
}

/**
 * Adds an adapter as if it were built in (its descriptor in code, not a file): every list above
 * sees it, and its config dir is protected from now on in this process. Returns its removal from
 * the lists (the protection stays: a protected path never becomes writable again mid-process).
 */
export function registerAdapter(adapter: AgentAdapter): () => void {
  if (adapter.kind === SWARM_AGENT_KIND || builtInAdapter(adapter.kind))
    throw new UsageError(`agent adapter ${JSON.stringify(adapter.kind)} is already registered`)
  BUILT_INS.push(adapter)
  installConfigDirsOf([adapter])
  return () => {
    const i = BUILT_INS.indexOf(adapter)
    if (i >= 0) BUILT_INS.splice(i, 1)
  }
}

/** `--agent`'s kinds for help texts: swarm's own agent first, then every registered adapter. */
export function agentKindsHelp(): string {
  return [SWARM_AGENT_KIND, ...BUILT_INS.map((a) => a.kind)].join(', ')
}

/** The variables naming each registered CLI's config dir → where under a probe home (probe-home.ts). */
export function probeHomeConfigEnv(): Record<string, string> {
  return Object.assign({}, ...BUILT_INS.map((a) => a.configEnv ?? {})) as Record<string, string>
}

/** The project config dirs of the registered CLIs and of `extra` (a user adapter), each once. */
export function projectConfigDirsOf(extra: readonly AgentAdapter[] = []): NonNullable<AgentAdapter['projectConfig']>[] {
  const seen = new Map<string, NonNullable<AgentAdapter['projectConfig']>>()
  for (const a of [...BUILT_INS, ...extra]) if (a.projectConfig && !seen.has(a.projectConfig.dir)) seen.set(a.projectConfig.dir, a.projectConfig)
  return [...seen.values()]
}

function installConfigDirsOf(adapters: readonly AgentAdapter[]): void {
  installAgentConfigDirs(Object.fromEntries(adapters.flatMap((a) => (a.projectConfig ? [[a.projectConfig.dir, a.projectConfig.protect]] : []))))
}

export interface AdapterDiagnostic {
  file: string
  message: string
}

export interface LoadedAdapters {
  adapters: Map<string, AgentAdapter>
  /** Adapter files that could not be read (skipped); an explicit `--agent` naming one fails. */
  diagnostics: AdapterDiagnostic[]
}

export interface AdapterLookup {
  /** The project directory whose `.claude/swarm-agents/` is read. */
  cwd: string
  env?: NodeJS.ProcessEnv
}

export function userAdaptersDir(env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'swarm-agents')
}

export function projectAdaptersDir(cwd: string): string {
  return path.join(cwd, '.claude', 'swarm-agents')
}

/** Every adapter, by kind: built-in, then user, then project (a later kind replaces an earlier). */
export async function loadAdapters(lookup: AdapterLookup): Promise<LoadedAdapters> {
  const adapters = new Map<string, AgentAdapter>(BUILT_INS.map((a) => [a.kind, a]))
  const diagnostics: AdapterDiagnostic[] = []
  for (const [dir, source] of [
    [userAdaptersDir(lookup.env), 'user'],
    [projectAdaptersDir(lookup.cwd), 'project'],
  ] as const) {
    for (const file of await adapterFiles(dir)) {
      try {
        const adapter = await loadAdapterFile(file, source)
        adapters.set(adapter.kind, adapter)
      } catch (err) {
        diagnostics.push({ file, message: (err as Error).message })
      }
    }
  }
  return { adapters, diagnostics }
}

/**
 * The adapter `--agent <kind>` names; undefined for swarm's own agent. An unknown kind is a usage
 * error listing the known ones; a kind whose file is broken reports that file.
 */
export async function resolveAdapter(kind: string | undefined, lookup: AdapterLookup): Promise<AgentAdapter | undefined> {
  if (kind === undefined || kind === SWARM_AGENT_KIND) return undefined
  const builtIn = builtInAdapter(kind)
  if (builtIn) return builtIn
  const { adapters, diagnostics } = await loadAdapters(lookup)
  const found = adapters.get(kind)
  if (found) return found
  const broken = diagnostics.find((d) => path.basename(d.file).replace(/\.(ya?ml|json)$/, '') === kind)
  if (broken) throw new CorruptFileError(broken.file, broken.message.replace(/^corrupt file \S+ \((.*)\)$/, '$1'))
  throw new UsageError(`unknown agent ${JSON.stringify(kind)}`, {
    hint: `use one of ${[SWARM_AGENT_KIND, ...adapters.keys()].join(', ')}, or describe it in ${path.join('.claude', 'swarm-agents', `${kind}.yaml`)}`,
  })
}

/** Reads one adapter file (YAML or JSON); its kind is its `kind:` or its file name. */
export async function loadAdapterFile(file: string, source: AdapterSource): Promise<AgentAdapter> {
  let bytes: Buffer
  try {
    bytes = await fs.readFile(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no adapter file ${file}`)
    throw err
  }
  return adapterFromBytes(file, source, bytes)
}

/** The adapter the bytes of `file` describe, with their sha256 (what a spawn pins). */
export function adapterFromBytes(file: string, source: AdapterSource, bytes: Buffer): AgentAdapter {
  const spec = parseSpecText(file, bytes.toString('utf8'), AdapterSpec)
  const kind = spec.kind ?? path.basename(file).replace(/\.(ya?ml|json)$/, '')
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(kind))
    throw new CorruptFileError(file, `the file name makes the kind ${JSON.stringify(kind)}; set kind: to lowercase letters, digits and -`)
  if (kind === SWARM_AGENT_KIND) throw new CorruptFileError(file, `kind "${SWARM_AGENT_KIND}" is swarm's own agent and cannot be redefined`)
  if (builtInKinds().includes(kind))
    throw new CorruptFileError(file, `kind "${kind}" is built in and cannot be redefined (the built-in is used); give this adapter another kind`)
  const adapter = adapterFromSpec(spec, { kind, source, file, sha256: sha256Hex(bytes) })
  // Protected in this process from the moment it is read (its own teammate's sandbox also names it: confine.ts).
  installConfigDirsOf([adapter])
  return adapter
}

async function adapterFiles(dir: string): Promise<string[]> {
  const names = await fs.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return []
    throw err
  })
  return names
    .filter((n) => /\.(ya?ml|json)$/.test(n) && !n.startsWith('.'))
    .sort()
    .map((n) => path.join(dir, n))
}
