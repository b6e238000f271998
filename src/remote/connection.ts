import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ExitCode, SwarmError } from '../errors.js'
import { rootDir } from '../home/paths.js'
import type { Env } from '../home/env.js'
import { CommandTimeoutError, type CommandResult, type LaunchedProcess } from '../process/launch.js'
import { type SshEndpoint, channelArgs, openSsh, runSsh, runSshInTerminal, sshControl, startSshMaster } from '../process/ssh.js'
import { ensureDir } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import { type RemoteHost, parseHost } from './host.js'

/*
 * One connection per host: an OpenSSH ControlMaster on a socket under the state root
 * (`<root>/ssh/<hash>`), warmed once before a burst of calls (a lock across processes, one promise
 * inside one), health-checked with `ssh -O check` before use and started again after a drop. Every
 * call has the host's own limit: a wedged host fails its own calls, never another host's.
 */

/**
 * The limit of one call to a host (SWARM_REMOTE_TIMEOUT_MS): a status poll of a wedged host ends
 * here. 5 s covers a helper's Node start-up (~0.3 s) plus a few round trips of a slow link.
 */
const DEFAULT_CALL_TIMEOUT_MS = 5_000
/** Making the master: the TCP connect, key exchange and auth (several round trips, 15 s like a slow VPN). */
const CONNECT_TIMEOUT_MS = 15_000

/** A host that did not answer in time: `swarm status` shows it as unreachable, the others as usual. */
export class HostUnreachableError extends SwarmError {
  constructor(host: string, why: string, cause?: unknown) {
    super('SWARM_HOST_UNREACHABLE', `host ${host} ${why}`, {
      exitCode: ExitCode.backendUnavailable,
      hint: `check it with "swarm hosts check ${host}"`,
      cause,
    })
  }
}

export function callTimeoutMs(env: Env): number {
  const v = Number(env.SWARM_REMOTE_TIMEOUT_MS)
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_CALL_TIMEOUT_MS
}

/** The control socket of `host`: short (a socket path is at most 104–108 bytes), one per host spec. */
export function controlPath(host: RemoteHost, env: Env): string {
  return path.join(rootDir(env), 'ssh', createHash('sha256').update(host.spec).digest('hex').slice(0, 16))
}

export class HostConnection {
  readonly endpoint: SshEndpoint
  private warming: Promise<void> | undefined

  constructor(
    readonly host: RemoteHost,
    private readonly env: Env,
  ) {
    this.endpoint = { destination: host.destination, ...(host.port !== undefined && { port: host.port }), controlPath: controlPath(host, env) }
  }

  /** The master's pid, when one answers on the socket. */
  async masterPid(): Promise<number | undefined> {
    const r = await sshControl(this.endpoint, 'check', { env: this.env })
    const m = /pid=(\d+)/.exec(r.stderr)
    return r.code === 0 && m ? Number(m[1]) : undefined
  }

  /**
   * A running master: checked, else started — once for every caller at the same moment, and under
   * a lock across processes (a cold master raced by parallel spawns loses all but one of them).
   */
  ensure(timeoutMs = CONNECT_TIMEOUT_MS): Promise<void> {
    this.warming ??= this.warm(Math.min(timeoutMs, CONNECT_TIMEOUT_MS)).finally(() => (this.warming = undefined))
    return this.warming
  }

  private async warm(connectMs: number): Promise<void> {
    if ((await this.masterPid()) !== undefined) return
    await ensureDir(path.dirname(this.endpoint.controlPath))
    await withFileLock(
      `${this.endpoint.controlPath}.master`,
      async () => {
        if ((await this.masterPid()) !== undefined) return
        // The socket of a master that died (SIGKILL, a reboot) refuses connections but is still
        // there; ssh -M would then run without multiplexing ("already exists, disabling
        // multiplexing") and every later call would make a connection of its own.
        await fs.rm(this.endpoint.controlPath, { force: true })
        let r: CommandResult
        try {
          r = await startSshMaster(this.endpoint, { env: this.env, timeoutMs: connectMs })
        } catch (err) {
          if (err instanceof CommandTimeoutError) throw new HostUnreachableError(this.host.spec, `did not answer within ${connectMs} ms`, err)
          throw err
        }
        if (r.code !== 0) throw new HostUnreachableError(this.host.spec, `refused the connection: ${lastLine(r.stderr) || `ssh exit ${r.code}`}`)
      },
      { initial: '' },
    )
  }

  /**
   * `command` on the host within the host's limit (HostUnreachableError past it). An ssh failure
   * (255) on a master that has gone is tried once more on a new one.
   */
  async run(command: string, opts: { input?: string; timeoutMs?: number } = {}): Promise<CommandResult> {
    const timeoutMs = opts.timeoutMs ?? callTimeoutMs(this.env)
    const once = async () => {
      // A call's limit bounds its connect too: a poll of a wedged host never waits for a full connect timeout.
      await this.ensure(timeoutMs)
      try {
        return await runSsh(this.endpoint, command, { env: this.env, timeoutMs, ...(opts.input !== undefined && { input: opts.input }) })
      } catch (err) {
        if (err instanceof CommandTimeoutError) throw new HostUnreachableError(this.host.spec, `did not answer within ${timeoutMs} ms`, err)
        throw err
      }
    }
    const r = await once()
    if (r.code === 255 && (await this.masterPid()) === undefined) return once()
    return r
  }

  /** A long-running channel (the relay); the caller owns the process. */
  async open(command: string): Promise<LaunchedProcess> {
    await this.ensure()
    return openSsh(this.endpoint, command, { env: this.env })
  }

  /** `command` with this terminal (`swarm attach`). */
  async inTerminal(command: string): Promise<number> {
    await this.ensure()
    return runSshInTerminal(this.endpoint, command, { env: this.env })
  }

  /**
   * The ssh command line (argv, `ssh` first) of a channel through this connection's master, for a
   * program that runs ssh itself: git's `GIT_SSH_COMMAND` (remote worktrees). The master is made first.
   */
  async channelArgv(): Promise<string[]> {
    await this.ensure()
    return ['ssh', ...channelArgs(this.endpoint, this.env)]
  }

  /** Ends the master (team delete): every channel through it closes. */
  async close(): Promise<void> {
    await sshControl(this.endpoint, 'exit', { env: this.env })
  }
}

const connections = new Map<string, HostConnection>()

/** This process's connection to `host` (a spec string or parsed). */
export function connectionTo(host: string | RemoteHost, env: Env): HostConnection {
  const parsed = typeof host === 'string' ? parseHost(host) : host
  const key = `${rootDir(env)}\u0000${parsed.spec}`
  let c = connections.get(key)
  if (!c) {
    c = new HostConnection(parsed, env)
    connections.set(key, c)
  }
  return c
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? ''
}
