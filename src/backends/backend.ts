import type { ExecutorOptions, InProcessExecutor, PaneExecutor } from './types.js'

type Env = NodeJS.ProcessEnv

/**
 * A backend as the registry knows it: a name, how to tell whether it works here and whether swarm
 * runs inside its terminal, and how to make its executor. Every list of backends (CLI choices,
 * detection, status, stop, team files) is read off the registry's table of these.
 */
export interface PaneBackend {
  readonly type: string
  readonly kind: 'pane'
  /** Shown in messages ("tmux", "iTerm2"). */
  readonly label: string
  /** The command whose success means the backend works here (`tmux -V`, `it2 session list`). */
  readonly probe: readonly [string, ...string[]]
  /**
   * It can open a session of its own outside its terminal (tmux: a detached session on its own
   * server; iTerm2: no). Detection falls back to such a backend; `team delete` always asks it
   * to close the team's session, even when no member's pane is recorded on it.
   */
  readonly standalone: boolean
  /** Whether swarm runs inside this backend's terminal (detection tries these first). */
  inside(env: Env): boolean
  /** Whether a backend swarm runs inside must still be probed before it is chosen. */
  readonly probeWhenInside: boolean
  /** How to install or enable it on this OS. */
  installHint(platform: NodeJS.Platform, osRelease?: string): string
  create(opts: ExecutorOptions & Record<string, unknown>): PaneExecutor
}

/** In-process teammates: one per leader process, chosen when there is no terminal. */
export interface InProcessBackend {
  readonly type: 'in-process'
  readonly kind: 'in-process'
  readonly label: string
  create(opts: ExecutorOptions): InProcessExecutor
}

export type Backend = PaneBackend | InProcessBackend
