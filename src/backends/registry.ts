import { UsageError } from '../errors.js'
import type { Backend, InProcessBackend, PaneBackend } from './backend.js'
import { teamStoreDirectory } from './directory.js'
import { inProcessBackend } from './in-process.js'
import { iterm2Backend } from './iterm2.js'
import { tmuxBackend } from './tmux-backend.js'
import type { ExecutorOptions, InProcessExecutor, PaneExecutor } from './types.js'

/**
 * The one list of backends, in detection order: the only module that imports the concrete ones.
 * A new backend is one file (its executor and its `PaneBackend`) and one entry here; the CLI's
 * `--backend` choices, detection, status, stop and team-file validation all read this table.
 */
const BUILT_IN: readonly Backend[] = [tmuxBackend, iterm2Backend, inProcessBackend]

const table: Backend[] = [...BUILT_IN]

/** The pane backends, in detection order. */
export function paneBackends(): readonly PaneBackend[] {
  return table.filter((b): b is PaneBackend => b.kind === 'pane')
}

export function findBackend(type: string): Backend | undefined {
  return table.find((b) => b.type === type)
}

export function isBackendType(value: unknown): value is string {
  return typeof value === 'string' && findBackend(value) !== undefined
}

/** `--backend` values: `auto` and every backend. */
export function backendChoices(): string[] {
  return ['auto', ...table.map((b) => b.type)]
}

/** Parses `--backend` (or a team file's `backend:`). UsageError (exit 2) for anything else. */
export function parseBackendChoice(value: string | undefined): string {
  if (value === undefined || value === 'auto') return 'auto'
  if (isBackendType(value)) return value
  const choices = backendChoices()
  throw new UsageError(`unknown backend ${JSON.stringify(value)}`, { hint: `use ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}` })
}

/**
 * Adds a pane backend after the built-in ones (a plugin, or a test's fake); returns the function
 * that takes it out again. A name already taken is refused.
 */
export function registerBackend(backend: PaneBackend): () => void {
  if (findBackend(backend.type)) throw new UsageError(`backend ${JSON.stringify(backend.type)} is already registered`)
  table.splice(table.length - 1, 0, backend)
  return () => {
    const i = table.indexOf(backend)
    if (i >= 0) table.splice(i, 1)
  }
}

/** Options any executor accepts; each backend reads its own (tmux's socket, it2's path). */
export type AnyExecutorOptions = ExecutorOptions & Record<string, unknown>

/** The executor of a backend. Pane executors default to finding panes in the teams' config.json. */
export function createExecutor(type: 'in-process', opts?: AnyExecutorOptions): InProcessExecutor
export function createExecutor(type: string, opts?: AnyExecutorOptions): PaneExecutor
export function createExecutor(type: string, opts: AnyExecutorOptions = {}): PaneExecutor | InProcessExecutor {
  const backend = findBackend(type)
  if (!backend) throw new UsageError(`unknown backend ${JSON.stringify(type)}`, { hint: `use one of ${backendChoices().slice(1).join(', ')}` })
  if (backend.kind === 'in-process') return (backend as InProcessBackend).create(opts)
  return backend.create({ ...opts, directory: opts.directory ?? teamStoreDirectory(opts.env) })
}
