/**
 * Types of the Bash sandbox: the settings (Claude Code's `sandbox` key), what one call is planned
 * to see, and the handle an agent's Bash tool runs its commands through.
 */

/** One Bash call's view of the filesystem: absolute, physical paths. */
export interface SandboxPlan {
  command: string
  cwd: string
  /** Bound read-write (existing directories only). */
  writable: string[]
  /**
   * Bound read-only in path order with the writable ones, so that a writable directory beneath
   * one is bound again on top: a project's `.claude/` over the member's own worktree in
   * `.claude/worktrees/` (mount rule, not scan). Everything else beneath stays read-only.
   */
  shadowed?: string[]
  /** Bound read-only over the writable and shadowed ones: protected paths, `filesystem.denyWrite`. */
  readOnly: string[]
  /** Replaced by an empty read-only tmpfs (directories) or /dev/null (files): the control plane, `filesystem.denyRead`. */
  hidden: string[]
  /**
   * Replaced by an empty tmpfs first, so that writable directories beneath are bound again on it
   * (an agent-CLI teammate's own home under `agent-homes/`); read-only once those are in place.
   */
  masked?: string[]
  network: boolean
  setenv: Record<string, string>
  /** The seccomp program bwrap loads (`seccompArgs`): no AF_UNIX sockets unless allowed, no TIOCSTI. */
  seccomp?: Buffer
}

/**
 * How a Bash call is run: `sandboxed` (inside bwrap), `unavailable` (the sandbox is on but cannot
 * run here: every call is asked), `unsandboxed` (turned off in settings, or an excluded command).
 */
export type SandboxStatus = 'sandboxed' | 'unavailable' | 'unsandboxed'

/** How one Bash call is started, and what to check once it ended. */
export interface SandboxLaunch {
  file: string
  args: string[]
  /** Added to the command's environment. */
  env?: Record<string, string>
  /** Removed from the command's environment (the provider keys a sandboxed command does not get). */
  unsetEnv?: readonly string[]
  /** Every process of the call dies when it exits (bwrap's pid namespace). */
  reapsItself?: boolean
  /** Written into a pipe at the child's fd 3, then closed: the seccomp program bwrap reads there. */
  fd3?: Buffer
  /**
   * Called when the command (and everything it started) is gone: protected paths it created
   * where none existed — which no bind mount could cover — are moved aside; returns what was moved.
   */
  settle?(): Promise<string[]>
}

/** What the Bash tool and the permission check ask of the agent's sandbox. */
export interface BashSandbox {
  /** How `command` would run; `reason` says why when it is not sandboxed. */
  statusFor(command: string): Promise<{ status: SandboxStatus; reason: string }>
  /** Sandboxed calls auto-allowed (settings' `sandbox.autoAllowBashIfSandboxed`). */
  readonly autoAllow: boolean
  /** The argv that runs `command` (`bash -c command` when it is not sandboxed). */
  launch(command: string, cwd: string): Promise<SandboxLaunch>
  /** Removes the private temp directory. */
  close(): Promise<void>
}
