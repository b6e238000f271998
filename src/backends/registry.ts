import { UsageError } from '../errors.js'
import type { Backend, InProcessBackend, PaneBackend } from './backend.js'
import { teamStoreDirectory } from './directory.js'
import { inProcessBackend } from './in-process.js'
import { iterm2Backend } from './iterm2.js'
import { PaneIo } from './pane-io.js'
import { BACKEND_ENV } from './spawn-config.js'
import { remoteBackend } from './remote-backend.js'
import { tmuxBackend } from './tmux-backend.js'
import type { ExecutorOptions, InProcessExecutor, PaneAddress, PaneExecutor, ViewSpec } from './types.js'
import type { Env } from '../home/env.js'

/**
 * The one list of backends, in detection order: the only module that imports the concrete ones.
 * A new backend is one file (its executor and its `PaneBackend`) and one entry here; the CLI's
 * `--backend` choices, detection, status, stop and team-file validation all read this table.
 */
const BUILT_IN: readonly Backend[] = [tmuxBackend, iterm2Backend, remoteBackend, inProcessBackend]

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

/** `--backend` values: `auto` and every backend a team can run on (members on other machines are placed with `--host`, not chosen here). */
export function backendChoices(): string[] {
  return ['auto', ...table.filter((b) => !(b.kind === 'pane' && b.remote)).map((b) => b.type)]
}

/** Parses `--backend` (or a team file's `backend:`). UsageError (exit 2) for anything else. */
export function parseBackendChoice(value: string | undefined): string {
  if (value === undefined || value === 'auto') return 'auto'
  const choices = backendChoices()
  if (choices.includes(value)) return value
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

/** The executor of members placed on other machines (`--host`): the backend that says `remote`. */
export function remoteExecutor(opts: AnyExecutorOptions = {}): PaneExecutor {
  const backend = paneBackends().find((b) => b.remote)
  if (!backend) throw new UsageError('no backend runs teammates on other machines')
  return createExecutor(backend.type, opts)
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

/** A pane backend by name; UsageError for an unknown one or one without panes. */
function paneBackend(type: string): PaneBackend {
  const backend = findBackend(type)
  if (backend?.kind === 'pane') return backend
  throw new UsageError(backend ? `${backend.label} teammates have no pane` : `unknown backend ${JSON.stringify(type)}`)
}

/** The keyboard and screen of a pane of backend `type` (the mixed demo types at its leader's console). */
export function paneIo(type: string, pane: PaneAddress, env: Env = process.env): PaneIo {
  return new PaneIo(paneBackend(type).paneDriver(pane, env))
}

/**
 * The pane this process runs in, on the backend that started it (its name in BACKEND_ENV, set at
 * spawn; a member started before that was recorded is tmux's when $TMUX says so): where an agent
 * CLI's courier types. Undefined outside any pane that backend can find.
 */
export function ownPaneIo(env: Env): PaneIo | undefined {
  const type = env[BACKEND_ENV] || (env.TMUX ? tmuxBackend.type : undefined)
  const backend = type === undefined ? undefined : findBackend(type)
  if (backend?.kind !== 'pane') return undefined
  const pane = backend.ownPane(env)
  return pane && new PaneIo(backend.paneDriver(pane, env))
}

/** The command that shows a team's panes from another terminal, when the backend needs one. */
export function attachHint(type: string, team: string, env: Env = process.env): string | undefined {
  const backend = findBackend(type)
  return backend?.kind === 'pane' ? backend.attachHint?.(team, env) : undefined
}

/** Stops the server of its own backend `type` would use for `env` (the demos, on a server of theirs). */
export async function closeServer(type: string, env: Env): Promise<void> {
  await paneBackend(type).closeServer?.(env)
}

/** Lays a team's panes out again (the tmux resize hook's `swarm layout`); nothing for a backend whose terminal does it. */
export async function relayout(type: string, team: string, socketPath: string | undefined, env: Env = process.env): Promise<void> {
  await paneBackend(type).relayout?.(team, socketPath, env)
}

/** Whether backend `type` can show hosted teammates in panes of its own (PaneBackend.openViews). */
export function showsHostedTeammates(type: string): boolean {
  const backend = findBackend(type)
  return backend?.kind === 'pane' && backend.openViews !== undefined
}

/**
 * Opens the panes that show hosted teammates (each its output file as it grows) on backend `type`,
 * all at once, then lays the team's panes out once — also when some could not be opened (the
 * error then goes on); returns their pane ids. UsageError for a backend without views.
 */
export async function openTeammateViews(type: string, specs: readonly ViewSpec[], env: Env = process.env): Promise<string[]> {
  const backend = paneBackend(type)
  const open = backend.openViews
  if (!open) throw new UsageError(`${backend.label} cannot show hosted teammates`)
  const team = specs[0]?.team
  try {
    return await open(specs, env)
  } finally {
    if (team !== undefined) await backend.relayout?.(team, undefined, env)
  }
}

/** Closes hosted teammates' views (they ended) on backend `type`, then lays the team's panes out once; nothing on a backend without views. */
export async function closeTeammateViews(
  type: string,
  team: string,
  views: ReadonlyArray<{ paneId: string; agentId: string }>,
  env: Env = process.env,
): Promise<void> {
  const backend = paneBackend(type)
  if (!views.length || !backend.closeViews) return
  try {
    await backend.closeViews(views, env)
  } finally {
    await backend.relayout?.(team, undefined, env)
  }
}
