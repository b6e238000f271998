import type { BashSandbox } from '../../sandbox/types.js'
import { runShellCommand, type ShellOptions, type ShellResult } from './shell.js'

/**
 * The one way a command of a model or of the project runs — a Bash call, a settings hook: through
 * the member's sandbox value (its bwrap view, or the explicit `unsandboxed(why)`). Without one it
 * throws before anything starts — there is no default that falls back to plain `bash -c`.
 */

export class MissingSandboxError extends Error {
  override name = 'MissingSandboxError'
  constructor() {
    super("no sandbox value was given for this command: nothing was run (a tool context needs the member's sandbox, or unsandboxed(why))")
  }
}

/** A command that must not run unconfined found no sandbox that can run here: nothing was run. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError'
  constructor(readonly reason: string) {
    super(`not run: it would run unconfined (${reason})`)
  }
}

export interface RunCommandOptions extends Omit<ShellOptions, 'launch'> {
  /**
   * Refuse (SandboxUnavailableError, before anything starts) where the sandbox is on but cannot run
   * here — what a Bash call gets by being asked first, a command nobody is asked about (a hook) gets
   * by not running. A sandbox turned off in the settings, or an excluded command, still runs.
   */
  refuseUnconfined?: boolean
}

/** Runs `command` as `sandbox` launches it; `blocked` lists the protected paths it created and the sandbox moved aside. */
export async function runCommand(
  sandbox: BashSandbox | undefined,
  command: string,
  options: RunCommandOptions,
): Promise<ShellResult & { blocked: string[] }> {
  if (!sandbox || typeof sandbox.launch !== 'function') throw new MissingSandboxError()
  const { refuseUnconfined, ...shell } = options
  if (refuseUnconfined) {
    const s = await sandbox.statusFor(command)
    if (s.status === 'unavailable') throw new SandboxUnavailableError(s.reason)
  }
  const launch = await sandbox.launch(command, options.cwd)
  const r = await runShellCommand({ ...shell, launch })
  return { ...r, blocked: (await launch.settle?.()) ?? [] }
}
