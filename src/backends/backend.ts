import type { ExecutorOptions, InProcessExecutor, PaneAddress, PaneDriver, PaneExecutor, ViewSpec } from './types.js'
import type { Env } from '../home/env.js'

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
  /**
   * It runs teammates on other machines (ssh): chosen by a member's host, never by detection, and
   * never the team's own backend (the leader stays local).
   */
  readonly remote?: true
  /** Whether swarm runs inside this backend's terminal (detection tries these first). */
  inside(env: Env): boolean
  /** Whether a backend swarm runs inside must still be probed before it is chosen. */
  readonly probeWhenInside: boolean
  /** How to install or enable it on this OS. */
  installHint(platform: NodeJS.Platform, osRelease?: string): string
  create(opts: ExecutorOptions & Record<string, unknown>): PaneExecutor
  /** The pane this process runs in, from what the terminal sets in it (tmux: $TMUX_PANE); undefined outside one. */
  ownPane(env: Env): PaneAddress | undefined
  /** The keyboard and screen of one of its panes (the registry hands it out wrapped in a PaneIo). */
  paneDriver(pane: PaneAddress, env: Env): PaneDriver
  /** How a person reaches the team's panes from another terminal, when that takes a command (tmux: `tmux -L swarm attach …`). */
  attachHint?(team: string, env: Env): string | undefined
  /** What `swarm doctor` reports of the server it runs teammates on (tmux: its socket, sessions, clipboard). */
  inspect?(env: Env, probed: boolean): Promise<ServerReport>
  /**
   * Lays a team's panes out again for its window's size (tmux's resize hook runs `swarm layout`): on
   * the server at `socketPath` without reading any team file (the hook runs in the server's env), else on the team's.
   */
  relayout?(team: string, socketPath: string | undefined, env: Env): Promise<void>
  /** Stops the server of its own it would use for `env`, returning once it is gone (the demos run on one of theirs). */
  closeServer?(env: Env): Promise<void>
  /**
   * Opens panes that show hosted teammates' output (each `spec.file`, as it grows) beside this
   * process's own pane, each tagged as its teammate's; returns their pane ids, in order (tmux:
   * `team create --hosted`).
   */
  openViews?(specs: readonly ViewSpec[], env: Env): Promise<string[]>
  /** Closes views openViews opened (each by its pane id and its teammate's agent id), of those still showing it: their teammates ended. */
  closeViews?(views: ReadonlyArray<{ paneId: string; agentId: string }>, env: Env): Promise<void>
}

/** A pane backend's server, as `swarm doctor` shows it. */
export interface ServerReport {
  /** How a person would address it (`tmux -L swarm`). */
  socket: string
  serverRunning: boolean
  sessions: string[]
  /** set-clipboard of the server teammates' panes run on (yours inside tmux), when it runs. */
  clipboard?: string
}

/** In-process teammates: one per leader process, chosen when there is no terminal. */
export interface InProcessBackend {
  readonly type: 'in-process'
  readonly kind: 'in-process'
  readonly label: string
  create(opts: ExecutorOptions): InProcessExecutor
}

export type Backend = PaneBackend | InProcessBackend
