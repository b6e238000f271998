/**
 * The one list of agent adapters: the built-ins — TypeScript descriptors, or spec files in
 * `adapters/builtin/` read by the same loader as a user's — then user-defined adapter files —
 * `<root>/swarm-agents/*.yaml` (user), then `<cwd>/.claude/swarm-agents/*.yaml` (project), a later
 * file replacing an earlier one of the same kind. A file never replaces a built-in kind: it is
 * refused (a diagnostic) and the built-in stays. Only this file imports the built-in adapters, and
 * every list of them is derived here: kinds for --help, the protected config dirs it installs into
 * the sandbox layer when it loads, the probe home's variables, each kind's shell tools.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { CorruptFileError, NotFoundError, UsageError } from '../errors.js'
import { rootDir } from '../home/paths.js'
import { type SpecBuiltIn, specBuiltIn } from './builtin-spec.js'
import { claudeAdapter } from './claude.js'
import { codexAdapter } from './codex.js'
import { opencodeAdapter } from './opencode.js'
import { piAdapter } from './pi.js'
import { qwenAdapter } from './qwen.js'
import { specAdapter } from './spec-loader.js'
import { type AdapterSource, type AgentAdapter, type ProjectConfigDir, SWARM_AGENT_KIND } from './types.js'
import { installAgentConfigDirs } from '../sandbox/protected.js'

/** A built-in: a TypeScript descriptor, or a spec file (builtin-spec.ts) read when first asked for. */
type BuiltIn = AgentAdapter | SpecBuiltIn
const adapterOf = (b: BuiltIn): AgentAdapter => ('adapter' in b ? b.adapter() : b)

/** The built-ins, then those registered at run time (registerAdapter). */
const BUILT_INS: BuiltIn[] = [claudeAdapter, codexAdapter, specBuiltIn('gemini'), opencodeAdapter, piAdapter, qwenAdapter]
installConfigDirsOf(BUILT_INS)

/** The kinds swarm defines itself (and those registered); no adapter file may take one of them. */
export function builtInKinds(): string[] {
  return [SWARM_AGENT_KIND, ...BUILT_INS.map((a) => a.kind)]
}

/** The built-in adapter of `kind`; undefined for swarm's own agent and for any other kind. */
export function builtInAdapter(kind: string): AgentAdapter | undefined {
  const found = BUILT_INS.find((a) => a.kind === kind)
  return found && adapterOf(found)
}

/**
 * Adds an adapter as if it were built in (its descriptor in code, not a file): every list above
 * sees it, and its config dir is protected from now on in this process. Returns its removal from
 * the lists (the protection stays: a protected path never becomes writable again mid-process).
 */
export function registerAdapter(adapter: AgentAdapter): () => void {
  if (builtInKinds().includes(adapter.kind)) throw new UsageError(`agent adapter ${JSON.stringify(adapter.kind)} is already registered`)
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
  return Object.assign({}, ...BUILT_INS.map((a) => adapterOf(a).configEnv ?? {})) as Record<string, string>
}

/** The project config dirs of the registered CLIs and of `extra` (a user adapter), each once. */
export function projectConfigDirsOf(extra: readonly AgentAdapter[] = []): ProjectConfigDir[] {
  const seen = new Map<string, ProjectConfigDir>()
  for (const a of [...BUILT_INS, ...extra]) if (a.projectConfig && !seen.has(a.projectConfig.dir)) seen.set(a.projectConfig.dir, a.projectConfig)
  return [...seen.values()]
}

function installConfigDirsOf(adapters: readonly Pick<AgentAdapter, 'projectConfig'>[]): void {
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
  const adapters = new Map<string, AgentAdapter>(BUILT_INS.map((a) => [a.kind, adapterOf(a)]))
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
export async function loadAdapterFile(file: string, source: Exclude<AdapterSource, 'built-in'>): Promise<AgentAdapter> {
  let bytes: Buffer
  try {
    bytes = await fs.readFile(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no adapter file ${file}`)
    throw err
  }
  return adapterFromBytes(file, source, bytes)
}

/** The adapter the bytes of a user's `file` describe, with their sha256 (what a spawn pins); never a built-in kind. */
export function adapterFromBytes(file: string, source: Exclude<AdapterSource, 'built-in'>, bytes: Buffer): AgentAdapter {
  const adapter = specAdapter(file, source, bytes, { reserved: builtInKinds() })
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
