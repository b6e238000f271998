import type { BashSandbox } from '../../sandbox/types.js'
import { runShellCommand, type ShellOptions, type ShellResult } from './shell.js'

/**
 * The one way a model's command runs: through the member's sandbox value (its bwrap view, or the
 * explicit `unsandboxed(why)`). Without one it throws before anything starts — there is no
 * default that falls back to plain `bash -c`.
 */

export class MissingSandboxError extends Error {
  override name = 'MissingSandboxError'
  constructor() {
    super("no sandbox value was given for this Bash call: nothing was run (a tool context needs the member's sandbox, or unsandboxed(why))")
  }
}

/** Runs `command` as `sandbox` launches it; `blocked` lists the protected paths it created and the sandbox moved aside. */
export async function runCommand(
  sandbox: BashSandbox | undefined,
  command: string,
  options: Omit<ShellOptions, 'launch'>,
): Promise<ShellResult & { blocked: string[] }> {
  if (!sandbox || typeof sandbox.launch !== 'function') throw new MissingSandboxError()
  const launch = await sandbox.launch(command, options.cwd)
  const r = await runShellCommand({ ...options, launch })
  return { ...r, blocked: (await launch.settle?.()) ?? [] }
}
