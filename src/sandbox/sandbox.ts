import fsp from 'node:fs/promises'
import { BWRAP_INSTALL, bwrapArgs, findBwrap, probeBwrap } from './bwrap.js'
import { seatbeltArgs } from './seatbelt.js'
import { seccompProgram } from './seccomp.js'
import { isExcludedCommand, strippedProviderVars, type SandboxConfig } from './sandbox-settings.js'
import type { BashSandbox, SandboxPlan, SandboxStatus } from './types.js'
import { exists, makePrivateTmp, moveAsideCreated, planView } from './view.js'

/**
 * One agent's Bash sandbox. Every call is planned afresh (the writable directories change when
 * team-lead adds one), so what a command may write is decided by the kernel, not by reading its
 * text: the string checks of the permission layer stay only as a first line.
 */
export interface SandboxOptions {
  config: SandboxConfig
  /** The agent's environment: its PATH finds bwrap (tests take it away to see the fallback). */
  env: NodeJS.ProcessEnv
  /** Names the private temp directory (`swarm-sandbox-<label>-…`). */
  label: string
  /** Hidden inside: `<root>/teams`, `<root>/tasks`. */
  hidden: string[]
  /** Read-only inside even where a writable directory holds them (user settings, agent definitions). */
  readOnly: string[]
  /** Where the command may write: its cwd or worktree, teamAllowedPaths, additionalDirectories. */
  writableDirs(): Promise<string[]> | string[]
  /** Every member's worktree: their `.git` and `.claude` read-only whatever their depth (see ViewInput). */
  protectedRoots?(): Promise<string[]> | string[]
  platform?: NodeJS.Platform
}

export function createBashSandbox(o: SandboxOptions): BashSandbox {
  const platform = o.platform ?? process.platform
  let tmpDir: Promise<string> | undefined
  let closed = false
  // Nothing runs once the member closed its sandbox (a subagent's call still in flight): no temp directory outlives it.
  const privateTmp = () => {
    if (closed) return Promise.reject(new Error(`the sandbox of ${o.label} was closed: nothing was run`))
    tmpDir ??= makePrivateTmp(o.label)
    return tmpDir
  }

  const statusFor = async (command: string): Promise<{ status: SandboxStatus; reason: string }> => {
    if (!o.config.enabled) return { status: 'unsandboxed', reason: 'the sandbox is turned off (sandbox.enabled is false)' }
    if (isExcludedCommand(command, o.config.excludedCommands))
      return { status: 'unsandboxed', reason: 'an excluded command (sandbox.excludedCommands)' }
    return sandboxAvailability(o.config, o.env, platform)
  }

  const plan = async (command: string, cwd: string): Promise<SandboxPlan & { before: ReadonlyMap<string, string> }> => {
    const [tmp, writable, protectedRoots] = await Promise.all([privateTmp(), o.writableDirs(), o.protectedRoots?.() ?? []])
    const view = await planView({ cwd, writable, protectedRoots, readOnly: o.readOnly, hidden: o.hidden, config: o.config, tmp, env: o.env })
    return { command, network: o.config.network, ...view }
  }

  return {
    statusFor,
    autoAllow: o.config.autoAllow,
    async launch(command, cwd) {
      // Sandboxed or not, a command gets no provider key the settings do not keep (sandbox.keepEnv).
      const unsetEnv = strippedProviderVars(o.config)
      const { status } = await statusFor(command)
      if (status !== 'sandboxed') return { file: 'bash', args: ['-c', command], unsetEnv }
      const p = await plan(command, cwd)
      const settle = () => moveAsideCreated(p.writable, p.before)
      if (platform === 'darwin') return { file: '/usr/bin/sandbox-exec', args: seatbeltArgs(p), env: p.setenv, unsetEnv, settle }
      const seccomp = seccompProgram({ blockUnixSockets: !o.config.allowAllUnixSockets })
      return {
        file: findBwrap(o.env, o.config.bwrapPath)!,
        args: bwrapArgs({ ...p, seccomp }),
        reapsItself: true,
        unsetEnv,
        settle,
        ...(seccomp && { fd3: seccomp }),
      }
    },
    async close() {
      closed = true
      if (tmpDir) await fsp.rm(await tmpDir, { recursive: true, force: true })
    },
  }
}

/** Whether the sandbox can run here, with the reason when it cannot (and how to fix it). */
export async function sandboxAvailability(
  config: Pick<SandboxConfig, 'bwrapPath'>,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): Promise<{ status: SandboxStatus; reason: string }> {
  if (platform === 'darwin') {
    return exists('/usr/bin/sandbox-exec')
      ? { status: 'sandboxed', reason: 'sandbox-exec (untested profile)' }
      : { status: 'unavailable', reason: '/usr/bin/sandbox-exec is missing' }
  }
  if (platform !== 'linux') return { status: 'unavailable', reason: `no sandbox on ${platform}` }
  const bwrap = findBwrap(env, config.bwrapPath)
  if (!bwrap && config.bwrapPath !== undefined) {
    return { status: 'unavailable', reason: `sandbox.bwrapPath ${config.bwrapPath} is not an executable file — fix or remove it in the settings` }
  }
  if (!bwrap) return { status: 'unavailable', reason: `bubblewrap (bwrap) is not installed — install it: ${BWRAP_INSTALL}` }
  // Without the filter a sandboxed command could drive tmux or docker through their sockets: no sandbox at all.
  if (!seccompProgram({ blockUnixSockets: true }))
    return { status: 'unavailable', reason: `swarm has no seccomp filter for ${process.arch} (x64 and arm64 only)` }
  const probe = await probeBwrap(bwrap)
  return probe.ok ? { status: 'sandboxed', reason: probe.detail } : { status: 'unavailable', reason: probe.detail }
}
