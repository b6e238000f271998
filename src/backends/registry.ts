import { type Detection, type DetectInputs, resolveBackend, systemDetectInputs } from './detect.js'
import { teamStoreDirectory } from './directory.js'
import { InProcessTeammates } from './in-process.js'
import { ITermExecutor, type ITermExecutorOptions } from './iterm2.js'
import { TmuxExecutor, type TmuxExecutorOptions } from './tmux.js'
import type { BackendChoice, BackendType, ExecutorOptions, InProcessExecutor, PaneExecutor } from './types.js'

/**
 * The one place that knows the concrete backends. Adding a backend means one file and one line
 * here. Pane executors default to finding panes in the teams' config.json.
 */
export type AnyExecutorOptions = ExecutorOptions & TmuxExecutorOptions & ITermExecutorOptions

export function createExecutor(type: 'tmux' | 'iterm2', opts?: AnyExecutorOptions): PaneExecutor
export function createExecutor(type: 'in-process', opts?: AnyExecutorOptions): InProcessExecutor
export function createExecutor(type: BackendType, opts?: AnyExecutorOptions): PaneExecutor | InProcessExecutor
export function createExecutor(type: BackendType, opts: AnyExecutorOptions = {}): PaneExecutor | InProcessExecutor {
  const withDirectory = { ...opts, directory: opts.directory ?? teamStoreDirectory(opts.env) }
  switch (type) {
    case 'tmux':
      return new TmuxExecutor(withDirectory)
    case 'iterm2':
      return new ITermExecutor(withDirectory)
    case 'in-process':
      return new InProcessTeammates(opts)
  }
}

/** Detects (or checks an explicit `--backend`) against the real machine unless inputs are given. */
export async function selectBackend(choice: BackendChoice, inputs: DetectInputs = systemDetectInputs()): Promise<Detection> {
  return resolveBackend(choice, inputs)
}
