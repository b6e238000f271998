/**
 * A whole process tree in the sandbox: how an agent-CLI teammate (Gemini CLI, opencode, pi, a
 * user-defined one) runs, so that everything it starts — its shell commands, background jobs,
 * hooks, MCP servers — is confined by the kernel, not by the CLI's own permission prompts. It
 * keeps the network (the CLI reaches its model itself) and its terminal; it sees the same files
 * as swarm's own sandboxed Bash, with the team's files hidden.
 */
import fsp from 'node:fs/promises'
import { bwrapViewArgs, findBwrap } from './bwrap.js'
import { sandboxAvailability } from './sandbox.js'
import { seccompProgram } from './seccomp.js'
import type { SandboxConfig } from './sandbox-settings.js'
import type { SandboxStatus } from './types.js'
import { makePrivateTmp, moveAsideCreated, planView } from './view.js'

export interface ProcessSandboxOptions {
  config: SandboxConfig
  env: NodeJS.ProcessEnv
  /** Names the private temp directory. */
  label: string
  cwd: string
  /** Writable besides the cwd and the private TMPDIR (the CLI's own home). */
  writable: readonly string[]
  readOnly: readonly string[]
  hidden: readonly string[]
  masked: readonly string[]
  /** Every member's worktree: their `.git` and `.claude` read-only whatever their depth (see ViewInput). */
  protectedRoots?: readonly string[]
  platform?: NodeJS.Platform
}

export interface ConfinedProcess {
  status: SandboxStatus
  /** Why it is not `sandboxed`, or what confines it. */
  reason: string
  file: string
  args: string[]
  /** The seccomp program bwrap reads from the child's fd 3 (`--seccomp 3`): the spawner must put it there. */
  fd3?: Buffer
  /** Once it is gone: protected paths it created are moved aside (returned); the private TMPDIR is removed. */
  settle(): Promise<string[]>
}

export async function confineProcess(argv: readonly string[], o: ProcessSandboxOptions): Promise<ConfinedProcess> {
  const platform = o.platform ?? process.platform
  const plain = (status: SandboxStatus, reason: string): ConfinedProcess => ({
    status,
    reason,
    file: argv[0],
    args: argv.slice(1),
    settle: async () => [],
  })
  if (!o.config.enabled) return plain('unsandboxed', 'the sandbox is turned off (sandbox.enabled is false)')
  if (platform !== 'linux') return plain('unavailable', `a whole agent CLI is sandboxed with bubblewrap, on Linux only (not ${platform})`)
  const available = await sandboxAvailability(o.config, o.env, platform)
  if (available.status !== 'sandboxed') return plain(available.status, available.reason)
  const tmp = await makePrivateTmp(o.label)
  const view = await planView({ ...o, tmp })
  // Unix sockets (the tmux server, docker, ssh-agent) and TIOCSTI into its terminal: refused by the kernel.
  const seccomp = seccompProgram({ blockUnixSockets: !o.config.allowAllUnixSockets })
  return {
    status: 'sandboxed',
    reason: available.reason,
    file: findBwrap(o.env, o.config.bwrapPath)!,
    // The network stays: the CLI calls its model API itself (no sandbox.network cut here).
    args: [...bwrapViewArgs({ ...view, network: true, ...(seccomp && { seccomp }) }), '--', ...argv],
    ...(seccomp && { fd3: seccomp }),
    async settle() {
      const moved = await moveAsideCreated(view.writable, view.before)
      await fsp.rm(tmp, { recursive: true, force: true })
      return moved
    },
  }
}
