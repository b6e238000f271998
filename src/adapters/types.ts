/**
 * The agent-adapter contract: everything swarm must know to run one agent CLI (Codex, Gemini CLI,
 * opencode, pi, Claude Code, or one a user describes in a YAML file) as a teammate. An adapter is
 * data plus a few pure functions; it starts nothing itself — the supervisor and the courier do.
 */
import type { PasteChunk } from '../backends/types.js'

import type { Verdict } from '../asks/types.js'
import type { Env } from '../home/env.js'

/**
 * The hook events swarm understands, whatever a CLI calls them (Codex `UserPromptSubmit`, Gemini
 * CLI `BeforeAgent`…). `swarm hook <event>` is invoked with one of these.
 */
export const SWARM_HOOK_EVENTS = [
  'session-start',
  'prompt-submit',
  'pre-tool',
  'permission-request',
  'post-tool',
  'stop',
  'notification',
  'session-end',
] as const
export type SwarmHookEvent = (typeof SWARM_HOOK_EVENTS)[number]

/** `--agent swarm` (and no --agent at all): swarm's own agent runtime, which needs no adapter. */
export const SWARM_AGENT_KIND = 'swarm'

/** Where an adapter was defined; project beats user beats built-in. */
export type AdapterSource = 'built-in' | 'user' | 'project'

/** What an adapter needs to prepare one teammate's launch. */
export interface AdapterContext {
  team: string
  name: string
  /** `<name>@<team>` */
  agentId: string
  /** Absolute working directory of the teammate. */
  cwd: string
  /**
   * A directory owned by this teammate alone (`agents/<name>/home`), created empty-or-reused, 0700:
   * the CLI's config dir (CODEX_HOME, GEMINI_CLI_HOME, …) lives here, never in the user's home.
   */
  configDir: string
  /** The whole first prompt: who it is, how to talk back, and its initial instructions. */
  firstPrompt: string
  /** The spawn's own instructions alone (`--prompt`, the member's prompt), for a CLI that reads them from its inbox. */
  prompt?: string
  model?: string
  /** swarm permission mode of the member (default, acceptEdits, bypassPermissions, …). */
  mode?: string
  /** True when re-adopting after a crash: continue the CLI's last session if it can. */
  resume: boolean
  /** argv running `swarm hook <event>` for this teammate (absolute node + bin, its identity). */
  hookArgv(event: SwarmHookEvent): string[]
  /** The same, as one POSIX-shell-quoted command string (for CLIs that take a command line). */
  hookCommand(event: SwarmHookEvent): string
  /** argv running `swarm mcp` for this teammate: an MCP stdio server (SendMessage, Task*). */
  mcpArgv: string[]
  /** The spawner's environment (for reading provider variables; never written). */
  env: Env
}

/** What prepare() returns: the pane's argv and the variables added to the teammate's environment. */
export interface LaunchPlan {
  argv: string[]
  env: Record<string, string>
  /**
   * Files and directories prepare() wrote that the CLI must not change (its hook registration,
   * provider config, extensions): read-only inside swarm's sandbox (`confinement: 'swarm'`).
   */
  readOnly?: string[]
  /**
   * For a CLI that reads its own inbox: the first message swarm sends it there (signed, as the
   * lead's), when it is more than the spawn's prompt (Claude Code without its task tools is told
   * to use `swarm tasks`). Unset: the spawn's prompt as it is.
   */
  inboxPrompt?: string
}

/**
 * How a CLI teammate's process tree is confined:
 * - `swarm` (the default): the whole CLI runs in swarm's OS sandbox (the control plane and other
 *   teammates' homes hidden, writes only to its cwd, its own home and a private TMPDIR); its
 *   hooks, `swarm mcp` and shell `swarm` reach the team through its pane wrapper's relay.
 * - `own`: the CLI's own sandbox, configured by prepare() (Codex's permission profile).
 * - `launcher`: swarm's OS sandbox, entered through a launcher prepare() puts in its argv, with its
 *   own team's inboxes and tasks writable — it reads and writes them itself (Claude Code's own team
 *   protocol: `claude-launcher.ts`, the launcher its self-spawns go through too).
 */
export type Confinement = 'swarm' | 'own' | 'launcher'

/** A wire API whose usage the metering proxy reads (meter-usage.ts). */
export const MODEL_APIS = ['anthropic-messages', 'openai-responses', 'openai-chat'] as const
export type ModelApi = (typeof MODEL_APIS)[number]

/**
 * How a CLI reaches its model, so its pane wrapper can put the metering proxy (meter-proxy.ts) in
 * between: the variable that names the provider's base URL (the proxy's upstream, and what the CLI
 * is pointed at instead) and the one that holds its key (sent upstream by the proxy; the CLI holds
 * a stand-in when `hideKey`).
 */
export interface ModelRoute {
  readonly api: ModelApi
  readonly baseUrlEnv: string
  /** The upstream when `baseUrlEnv` is unset. */
  readonly defaultBaseUrl: string
  readonly keyEnv: string
  /** The CLI gets a stand-in for the key (false for Claude Code, which asks before using a key it has not approved). */
  readonly hideKey: boolean
  /** Arguments after its program that point it at `url` too (a CLI whose config file names its base URL). */
  pointArgs?(url: string): string[]
}

/**
 * How a message reaches the agent:
 * - `paste`: bracketed paste into its pane (in `chunk`-sized pieces if given), `submitKeys` after
 *   `settleMs`, counted as delivered only once `confirm` says so (`hook`: its prompt-submit hook saw the text; `screen`: the pane
 *   shows it left the input box).
 * - `http`: the CLI's own HTTP API (opencode `/tui/append-prompt` + `/tui/submit-prompt`).
 * - `inbox`: the agent reads its swarm inbox itself (swarm's agent, Claude Code teammates).
 */
export type Delivery =
  | {
      method: 'paste'
      settleMs: number
      submitKeys: string[]
      confirm: 'hook' | 'screen'
      /**
       * Paste in pieces of at most this size: a CLI that folds a bigger paste into a placeholder
       * expanded only on submit (Qwen Code) then holds the text itself, which nothing can lose.
       */
      chunk?: PasteChunk
    }
  | { method: 'http' }
  | { method: 'inbox' }

/** Regular expressions (as source text) matched against a pane's title or visible screen. */
export interface StatePatterns {
  working?: string
  idle?: string
  waiting?: string
}

/** How the agent's state is observed, best first: hooks, its control channel, pane titles, the screen. */
export interface StateObservation {
  hooks: boolean
  titles?: StatePatterns
  screen?: StatePatterns
}

/** One hook call from a control channel's event: `swarm hook`'s code, run in the pane wrapper. */
export interface ChannelHook {
  event: SwarmHookEvent
  payload: unknown
  signal?: AbortSignal
  /** permission-request: the id of the request once on file (to withdraw it if answered elsewhere). */
  onAsked?: (requestId: string) => void
}

/** What a control channel is opened with: the teammate it serves, in its pane wrapper. */
export interface ChannelContext {
  team: string
  name: string
  env: Env
  /** Runs `swarm hook <event>` for this teammate in-process (its adapter, its pinned kind). */
  runHook(hook: ChannelHook): Promise<HookReply>
}

/** One control channel, open for one teammate until its CLI exits. */
export interface OpenChannel {
  /** Where the courier delivers a message (`delivery: { method: 'http' }`); absent: the pane. */
  promptBox?: PromptBox
  close(): Promise<void>
}

/** A prompt box a courier types into over a CLI's own API, not its terminal. */
export interface PromptBox {
  appendPrompt(text: string): Promise<void>
  submitPrompt(): Promise<void>
  clearPrompt(): Promise<void>
  /** The user prompts the CLI holds, newest last: asked before a retry, so a late confirmation is no resend. */
  lastUserTexts(): Promise<string[]>
}

/**
 * A CLI's own control channel beside its pane (opencode's HTTP API and SSE event stream): the pane
 * wrapper opens it; its events run `swarm hook` in-process, and it may take the prompts. An open
 * set: a CLI with a channel of its own declares it here, and nothing else names it.
 */
export interface ControlChannel {
  /** For diagnostics (`opencode-sse`). */
  readonly name: string
  /** Opens it for one teammate; undefined when the CLI's environment names no endpoint to reach. */
  open(ctx: ChannelContext): OpenChannel | undefined
}

/**
 * The CLI's project config directory (`.codex`, `.gemini`…, under a teammate's cwd): what inside it
 * makes the CLI run something or grant itself more, so that a write there is asked in every mode and
 * read-only in every sandbox (sandbox/protected.ts is given this from the registry).
 */
export interface ProjectConfigDir {
  /** Its name in the project (`.gemini`). */
  readonly dir: string
  /** The entries inside it that are protected (`settings.json`, `extensions`). */
  readonly protect: readonly string[]
  /**
   * Made when missing before a CLI teammate starts in swarm's sandbox, so it is read-only whole
   * (default true); false for a CLI that installs into a config directory it finds (opencode).
   */
  readonly makeWhenMissing?: boolean
}

/** What a CLI's hook payload says, read into one shape (fields absent when it did not say). */
export interface HookFacts {
  sessionId?: string
  toolName?: string
  toolInput?: Record<string, unknown>
  /** The submitted prompt (prompt-submit). */
  prompt?: string
  /** The agent's last assistant text (stop), the summary of its idle notification. */
  lastAssistantText?: string
  /** A notification's text, e.g. "needs your permission". */
  message?: string
}

/** What `swarm hook` prints and exits with, in the CLI's own form. */
export interface HookReply {
  stdout?: string
  stderr?: string
  exitCode: number
}

/** How the CLI is asked to exit its own way before it is killed. */
export interface QuitMethod {
  /** tmux key names sent in order (e.g. ['C-c', 'C-c']), then `text` + Enter if given. */
  keys?: string[]
  text?: string
  /** Else (or after) this signal to the pane's process. */
  signal?: NodeJS.Signals
  /** How long it gets before the pane's process tree is killed. */
  graceMs: number
}

/**
 * At least one of `anyOf` must be set (non-empty) in the spawner's environment. With none:
 * `warn` — one line at spawn, the CLI starts anyway (it waits at its own sign-in screen, which a
 * person can still answer in the pane) — or `refuse` (exit 2), for a CLI that cannot start at all.
 */
export interface RequiredEnv {
  readonly anyOf: readonly string[]
  readonly without: 'warn' | 'refuse'
}

export type TeamChannel = 'shell' | 'mcp'

export interface AgentAdapter {
  /** What `--agent` names: `codex`, `gemini`, `qwen`, `opencode`, `pi`, `claude`, or a user's. */
  readonly kind: string
  readonly description: string
  readonly source: AdapterSource
  /** Where it was defined (a YAML file), for diagnostics. */
  readonly file?: string
  /** User-defined adapters: sha256 (hex) of the file's bytes, pinned with the member at spawn. */
  readonly sha256?: string
  /** The executable looked up on PATH, then SWARM_AGENT_BIN_DIR (binary.ts); `swarm doctor` reports it. */
  readonly binary: string
  /** A variable naming the executable, which then beats PATH (`SWARM_CLAUDE_BIN`); binary.ts looks it up. */
  readonly binaryEnv?: string
  /** Programs its command really runs besides `binary` (a launcher's target): preflight looks for each too. */
  readonly requiredBinaries?: readonly string[]
  /** What to do when the binary is missing (the install command); absent: binary.ts's generic hint. */
  readonly installHint?: string
  /** Arguments that print its version (`--version`). */
  readonly versionArgs: readonly string[]
  /** Provider variables forwarded from the spawner (a trailing `*` is a prefix). */
  readonly providerEnv: readonly string[]
  /** The provider variables it cannot reach a model without (provider-check.ts); absent: it needs none. */
  readonly requiredEnv?: RequiredEnv
  readonly delivery: Delivery
  readonly states: StateObservation
  /** The CLI's hook event names → swarm's; empty for a CLI without command hooks. */
  readonly hookEvents: Readonly<Record<string, SwarmHookEvent>>
  readonly quit: QuitMethod
  /** How its process tree is confined; absent: `swarm`. */
  readonly confinement?: Confinement
  /** How it reaches its model: its requests then go through the metering proxy and count against its budgets. */
  readonly modelRoute?: ModelRoute
  /** Its project config directory: derived from it are the protected paths and the sandbox's read-only dirs. */
  readonly projectConfig?: ProjectConfigDir
  /**
   * The variables naming its user config dir → where under a throwaway home (`{ CODEX_HOME: '.codex' }`):
   * `swarm doctor`'s probes point each there (probe-home.ts), never at the user's own.
   */
  readonly configEnv?: Readonly<Record<string, string>>
  /**
   * Its tools that run a shell command with `command` in their input (`run_shell_command`): an
   * "always" answer for one is kept as swarm's rule (asks/always.ts).
   */
  readonly shellTools?: readonly string[]
  /**
   * It reads and consumes its own inbox and reports its activity in its member entry's `isActive`
   * (Claude Code's team protocol): swarm keeps a record of what it sent it, writes no state.json for
   * it, and reads `isActive` as its state. Recorded on the member entry at spawn (`ownsInbox`).
   */
  readonly ownsInbox?: boolean
  /**
   * How its teammate messages the team and works the task list; absent: `shell`. `shell`: `swarm
   * send` / `swarm tasks` from its shell (a `swarm` shim on its PATH), swarm's MCP tools too if it
   * loads them. `mcp`: swarm's MCP tools only (`swarm mcp`, a process of swarm's that the CLI starts
   * outside its own sandbox and that writes through the one send path): no shim is written and its
   * first prompt names the tools, so its sandbox may deny the team's inboxes to every command.
   */
  readonly teamChannel?: TeamChannel
  /** Its own control channel beside the pane (opencode's HTTP API + event stream). */
  readonly channel?: ControlChannel
  /**
   * Writes the teammate's config dir (hook registration, MCP server `swarm mcp`, provider
   * config) and returns the pane's argv and env. Idempotent: resume calls it again.
   */
  prepare(ctx: AdapterContext): Promise<LaunchPlan>
  /**
   * Refuses a teammate before anything is written for it, beyond what preflight.ts checks for
   * every adapter (provider variables, the binary): a name the CLI cannot address.
   */
  preflight?(o: { team: string; name: string; env: NodeJS.ProcessEnv }): void
  /**
   * Its file-writing tools, as swarm's own tool names (`write_file: 'Write'`): a permission request
   * for one is decided by swarm's rule engine with the path it writes, exactly as swarm's Edit/Write
   * (the control plane denied, protected paths asked in every mode, acceptEdits inside the cwd allowed).
   */
  readonly fileTools?: Readonly<Record<string, 'Edit' | 'Write'>>
  /** Reads a hook payload (stdin JSON of the CLI's hook) into HookFacts. */
  readHook(event: SwarmHookEvent, payload: unknown): HookFacts
  /** The hook's reply for the ask flow's Verdict (pre-tool / permission-request) in the CLI's form: `message` is the deny's feedback or the allow's reason. */
  answerPermission(event: SwarmHookEvent, answer: Verdict, facts: HookFacts): HookReply
  /**
   * For a CLI driven over its own control channel (opencode's HTTP API): starts the installed
   * `binary` briefly in a throwaway home and says `ok` or what failed (`swarm doctor`).
   */
  probe?(binary: string, env: Env): Promise<string>
}
