import type { SandboxStatus } from '../../sandbox/types.js'
import type { ToolKind } from './tools.js'
import type { PermissionModeName } from './modes.js'

export type { PermissionModeName }

/** What a rule, or an evaluation, says about a tool call. */
export type RuleBehavior = 'allow' | 'deny' | 'ask'

/** Where a rule came from; later sources win ties in "last matching rule". */
export type RuleSource = 'user' | 'project' | 'local' | 'cli' | 'session' | 'team'

/**
 * One parsed permission rule, e.g. `Bash(npm test:*)` in the allow list.
 * `content` is undefined for a whole-tool rule (`Bash`, `Bash()`, `Bash(*)`).
 */
export interface PermissionRule {
  behavior: RuleBehavior
  toolName: string
  content?: string
  /** The rule as written, for messages: `Bash(npm test:*)`. */
  raw: string
  source?: RuleSource
  /**
   * Directory that `/path` patterns resolve against: the project directory for project and local
   * settings, the directory of the settings file for user settings, the cwd for command-line rules.
   * When absent, `/path` resolves against the evaluation's cwd.
   */
  baseDir?: string
}

/** A directory where `acceptEdits` passes file edits; a bare string covers every edit tool. */
export type AllowedPath = string | { path: string; toolName?: string }

/**
 * Everything `evaluatePermission` looks at. Paths are absolute; the only filesystem access is
 * resolving symlinks (realpath of the nearest existing ancestor).
 */
export interface PermissionQuery {
  toolName: string
  input: Record<string, unknown>
  /** What the tool does (declared on it): read and coordination tools pass unless a rule says otherwise. */
  kind: ToolKind
  mode: PermissionModeName
  /** Ordered: deny wins, then the last matching allow/ask rule. */
  rules: readonly PermissionRule[]
  /** The teammate's working directory; relative inputs and patterns resolve against it. */
  cwd: string
  /** Where `acceptEdits` passes edits besides cwd: teamAllowedPaths, additionalDirectories. */
  allowedPaths?: readonly AllowedPath[]
  /** `<root>/teams` and `<root>/tasks`: file tools never write there, Bash that names them is asked. */
  controlPlaneDirs: readonly string[]
  /** swarm's state root (`<root>`); a Bash command that names it is asked too. */
  rootDir?: string
  /**
   * Settings files and agent-definition directories a teammate could edit to raise its own rights:
   * editing them is always asked, whatever the mode (see controlPlaneOptions).
   */
  protectedPaths?: readonly string[]
  /** In `plan` mode, the one file the teammate may write. */
  planFilePath?: string
  /** Home directory for `~` in patterns; defaults to os.homedir(). */
  home?: string
  /**
   * How this Bash call would run (see BashSandbox.statusFor): `unavailable` makes it asked in
   * every mode, whatever the rules; absent means unsandboxed.
   */
  bashSandbox?: { status: SandboxStatus; reason: string }
  /** settings' `sandbox.autoAllowBashIfSandboxed`: a sandboxed call no rule matched is allowed. */
  autoAllowSandboxedBash?: boolean
  /** settings' `sandbox.filesystem.denyRead` (absolute): file tools may not read there either, in any mode. */
  denyRead?: readonly string[]
}

/** Which step of the evaluation decided. */
export type DecisionSource = 'control-plane' | 'protected-file' | 'sandbox' | 'rule' | 'mode'

export interface RuleDecision {
  behavior: RuleBehavior
  /** One line for humans: why this behaviour. */
  reason: string
  source: DecisionSource
  /** The rule that decided, when one did. */
  rule?: PermissionRule
}

/** Where a settings file sits in the merge order (see loadPermissionSettings). */
export type SettingsScope = 'user' | 'project' | 'local'

/**
 * One PermissionRequest hook command from settings. `matcher` is a regular expression over the
 * tool name (absent, '' or '*' = every tool).
 */
export interface PermissionHook {
  matcher?: string
  command: string
  /** Seconds; default 30. */
  timeout?: number
  source: SettingsScope
  /** The settings file it came from, for diagnostics. */
  file: string
}
