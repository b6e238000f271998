import type { LaunchedProcess, LaunchOptions } from '../process/launch.js'
import type { Sealer } from '../trust/sign.js'
import type { NewMessage } from '../mailbox/entry.js'
import type { InboxMessage } from '../mailbox/types.js'
import type { Env } from '../home/env.js'
/**
 * A registered backend's name (`tmux`, `iterm2`, `in-process`, or one added with registerBackend):
 * checked against backends/registry.ts wherever one is read from a user or a file.
 */
export type BackendType = string

/** `--backend`: a backend, or `auto` for detection. */
export type BackendChoice = 'auto' | BackendType

/** What a pane backend needs to start a teammate. Nothing in it is ever interpreted by a shell. */
export interface TeammateSpawnConfig {
  team: string
  name: string
  /** The teammate's command, executed directly (argv[0] looked up on PATH). */
  argv: string[]
  /** Working directory of the teammate (absolute). */
  cwd: string
  /** Environment added for the teammate; passed to tmux on stdin, so secrets never reach an argv. */
  env?: Record<string, string>
  /** Agent colour name (blue, green, purple…). */
  color?: string
  /** Pane title; defaults to the name. */
  title?: string
  /** Where the pane's output is logged; defaults to `agents/<name>/pane.log`. */
  logFile?: string
  /**
   * Has the command got through its start-up since `since` (ms)? A backend that starts many at once
   * (spawnMany) lets a few start at a time and the next ones when this says so; without it, the
   * command takes no turn (a plain command is cheap to start).
   */
  started?: (since: number) => Promise<boolean>
  /**
   * A member on another machine: its host, and what the host's swarm plans its launch from
   * (argv and paths are made there, never sent from here).
   */
  remote?: RemoteLaunch
}

/** A remote member's launch as its host's swarm is asked for it (src/backends/remote.ts). */
export interface RemoteLaunch {
  /** `[user@]host[:port]`, as recorded on the member. */
  host: string
  launch: { agent?: string; model?: string; mode?: string; agentType?: string; resume?: boolean; cwd?: string }
}

/** What an in-process teammate runs instead of a command: its exit code (0 when it returns nothing). */
export type TeammateMain = (ctx: TeammateContext) => Promise<number | void> | number | void

/** An in-process teammate: the same identity, a function instead of argv. */
export interface InProcessSpawnConfig extends Omit<TeammateSpawnConfig, 'argv' | 'logFile' | 'title'> {
  run: TeammateMain
}

/**
 * Everything an in-process teammate knows about itself, from `currentTeammate()` anywhere in its
 * async call tree. In-process teammates share process.cwd(), env and stdout with the leader:
 * use `cwd`, `env` and `print` explicitly.
 */
export interface TeammateContext {
  readonly team: string
  readonly name: string
  readonly agentId: string
  readonly cwd: string
  readonly color?: string
  readonly env: Readonly<Record<string, string>>
  /** Aborted by kill (and after an approved shutdown); the teammate's own, no one else's. */
  readonly signal: AbortSignal
  /** Writes lines prefixed with the teammate's coloured name to the leader's terminal. */
  print(text: string): void
  /** Starts a child process owned by this teammate: its whole tree is killed with the teammate. */
  launch(file: string, args: string[], opts?: LaunchOptions): LaunchedProcess
}

/** A started teammate. */
export interface SpawnedTeammate {
  agentId: string
  backendType: BackendType
  /** tmux pane id (`%7`), iTerm2 session id, or `in-process`. */
  paneId: string
  /** The teammate's process, where the backend knows it. */
  pid?: number
  /** tmux: the server's socket path, recorded so that any shell can find the pane again. */
  socketPath?: string
}

/** A teammate's process as the backend sees it. */
/** `paneId`: where a pane backend found it (the leader, who has no pane recorded, is found by its tag); `window`: the name of its tmux window (a page `<team>+N`). */
export type ProcessState =
  | { state: 'alive'; pid?: number; paneId?: string; window?: string }
  | { state: 'exited'; code: number }
  | { state: 'dead'; reason: string }
  /** A member on a host that did not answer within its limit (wedged, unreachable): not known to be dead. */
  | { state: 'unreachable'; reason: string }

/** How a graceful stop ended. `rejected` and `timeout` leave the teammate running. */
export type TerminateOutcome = { outcome: 'exited' } | { outcome: 'approved' } | { outcome: 'rejected'; reason: string } | { outcome: 'timeout' }

export interface TerminateOptions {
  /** How long to wait for the teammate to stop; default GRACEFUL_STOP_MS. */
  timeoutMs?: number
  signal?: AbortSignal
}

/**
 * One way of running teammates (docs/architecture.md §3, §5). An executor only spawns, sends and stops; who is in
 * the team and what state a member is in belongs to the team store and the runner.
 */
export interface TeammateExecutor<C = TeammateSpawnConfig> {
  readonly type: BackendType
  /** Starts the teammate; resolves once its process (or function) runs. */
  spawn(config: C): Promise<SpawnedTeammate>
  /** Puts a message in the teammate's inbox, through its author's seal: one from team-lead needs the executor's `sign` (else it throws, nothing written). */
  sendMessage(agentId: string, message: NewMessage | InboxMessage): Promise<void>
  /**
   * Graceful: sends a signed `shutdown_request`, waits for the process to end or the teammate to
   * answer; an approved or finished teammate's pane is then closed. Never forces.
   */
  terminate(agentId: string, reason?: string, opts?: TerminateOptions): Promise<TerminateOutcome>
  /** Now: aborts / kills the pane and the process tree (SIGTERM, SIGKILL after KILL_GRACE_MS). */
  kill(agentId: string): Promise<void>
  /** `kill` of many at once, as few backend round trips as the backend allows (tmux: one list, one script, one layout per server). */
  killMany(agentIds: string[]): Promise<void>
  isActive(agentId: string): Promise<boolean>
  /** The state of many teammates at once, with one backend round trip. */
  status(agentIds: string[]): Promise<Map<string, ProcessState>>
}

/** Where a leader pane is. */
export interface LeaderPane {
  paneId: string
  socketPath?: string
  /** True when this call created the session or window. */
  created: boolean
}

export interface LeaderOptions {
  /** The leader's command (the leader console); the first pane runs it. */
  argv: string[]
  cwd: string
  env?: Record<string, string>
}

/** tmux and iTerm2: teammates in panes next to a leader pane. */
export interface PaneExecutor extends TeammateExecutor<TeammateSpawnConfig> {
  readonly type: string
  readonly kind: 'pane'
  /**
   * Starts many teammates: every pane first, then their commands, a few at a time (`started`);
   * one result per config, in order. A teammate whose pane exists is not reported failed.
   */
  spawnMany(configs: TeammateSpawnConfig[]): Promise<Array<PromiseSettledResult<SpawnedTeammate>>>
  /** The team's leader pane, created (running `argv`) when there is none yet. */
  ensureSession(team: string, leader: LeaderOptions): Promise<LeaderPane>
  /** A running leader pane (started again when it is dead or gone), the teammates' panes untouched. */
  ensureLeader(team: string, leader: LeaderOptions): Promise<LeaderPane>
  /** Kills every pane of the team, the leader's included, with their process trees. */
  stopTeam(team: string): Promise<void>
  /** Members on other machines only: the team's link to each of its hosts, started again where it is not running. */
  relink?(team: string): Promise<void>
  /** Moves a pane out of sight and back (tmux only). */
  readonly supportsHideShow: boolean
  hide(agentId: string): Promise<void>
  show(agentId: string): Promise<void>
  /**
   * Puts this terminal on the team's panes (`swarm attach`) and resolves with the exit code of
   * what it ran; NotFoundError when the team has nothing to attach to here. With `member`, its
   * pane is the one shown (its window made current, the pane selected); NotFoundError without one.
   */
  attach(team: string, io: AttachIo, member?: string): Promise<number>
}

/** The in-process backend, plus a way to wait for a teammate's function to finish. */
export interface InProcessExecutor extends TeammateExecutor<InProcessSpawnConfig> {
  readonly type: 'in-process'
  readonly kind: 'in-process'
  /** Resolves with the final state once the teammate's function has settled. */
  wait(agentId: string): Promise<ProcessState>
  /** Kills every teammate of this process (the leader is leaving). */
  killAll(): Promise<void>
}

/** Where an agent's pane is, as recorded when it was spawned. */
export interface PaneRef extends PaneAddress {
  agentId: string
}

/** A pane of a pane backend: its id (tmux `%7`, an iTerm2 session id) and, for tmux, its server's socket. */
export interface PaneAddress {
  paneId: string
  socketPath?: string
}

/** The most one paste may hold: `chars` characters (code points) and `lines` lines. */
export interface PasteChunk {
  chars: number
  lines: number
}

declare const neutralised: unique symbol
/** Text fit to paste: no control character but newline and tab. Only PaneIo (backends/pane-io.ts) makes one. */
export type PastePiece = string & { readonly [neutralised]: true }

/**
 * A pane backend's raw keyboard and screen of one pane. Nothing outside backends/ holds one:
 * callers get a PaneIo (the registry's paneIo, ownPaneIo), which neutralises what it pastes.
 */
export interface PaneDriver {
  /** One bracketed paste of `piece` (never an argv for tmux: a buffer loaded on stdin). */
  paste(piece: PastePiece): Promise<void>
  /** tmux key names (`Enter`, `C-c`, `Escape`…), already checked by PaneIo; one call. */
  keys(keys: readonly string[]): Promise<void>
  /** `text` typed literally. */
  type(text: string): Promise<void>
  /** The visible screen, plain text. */
  screen(): Promise<string>
}

/** How `swarm attach` talks to the person: whether a terminal is there, and a line to show first. */
export interface AttachIo {
  terminal: boolean
  notice(line: string): void
}

/**
 * How a pane executor finds panes it did not start itself (a fresh `swarm status` process):
 * normally the team's config.json.
 */
export interface PaneDirectory {
  lookup(agentIds: string[]): Promise<Map<string, PaneRef>>
  /** The panes of a team's members that run on `backend`, oldest first. */
  teamPanes(team: string, backend: BackendType): Promise<PaneRef[]>
}

/** Seals a lead message (docs/architecture.md §2): the lead's signer, or `claude-lead` in a team led by Claude Code. */
export type LeadSigner = Sealer

/** Options every executor accepts. */
/** A hosted teammate's view (PaneBackend.openViews): the file its leader writes its output to. */
export interface ViewSpec {
  team: string
  name: string
  file: string
  color?: string
}

export interface ExecutorOptions {
  /** SWARM_HOME and friends for paths, TMUX/TMUX_TMPDIR/SWARM_TMUX_SOCKET for tmux. */
  env?: Env
  directory?: PaneDirectory
  /** Seals team-lead's entries (the shutdown_request of terminate); without it no lead entry is written. */
  sign?: LeadSigner
  /** The sender of shutdown requests; default team-lead. */
  from?: string
  /** The leader command used when spawn finds no session for the team. */
  leaderArgv?: (team: string) => string[]
  /** In-process: where prefixed teammate output goes (default process.stdout). */
  output?: (text: string) => void
  /** In-process: where one teammate's own lines go instead, unprefixed (a hosted teammate's view); undefined: `output`. */
  outputFor?: (name: string) => ((text: string) => void) | undefined
}
