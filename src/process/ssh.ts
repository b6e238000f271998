import { type CommandResult, type LaunchedProcess, type RunOptions, launchProcess, runCommand, runInTerminal } from './launch.js'
import type { Env } from '../home/env.js'

/*
 * OpenSSH as swarm runs it: every call goes through one ControlMaster per host, on a control
 * socket swarm owns; keys, agents, jump hosts and known_hosts are OpenSSH's own (swarm never
 * stores or asks for a password: BatchMode). A command for the remote is one string, which the
 * remote user's shell reads; whoever builds it quotes it (remote/helper.ts).
 */

/** One host as ssh is told to reach it. */
export interface SshEndpoint {
  /** `user@host` or a Host of the ssh config. */
  destination: string
  port?: number
  /** The ControlMaster's socket (ControlPath). */
  controlPath: string
  /** An ssh config file (`-F`); undefined: ssh's own (~/.ssh/config). */
  configFile?: string
}

/**
 * Keep-alives of the master: a connection that stops answering (a dropped link, a wedged host)
 * is given up after 3 × 5 s, so the next call makes a new one (OpenSSH's own mechanism).
 */
const KEEPALIVE = ['-o', 'ServerAliveInterval=5', '-o', 'ServerAliveCountMax=3']

function common(e: SshEndpoint, env?: Env): string[] {
  const config = e.configFile ?? env?.SWARM_SSH_CONFIG
  return [
    ...(config ? ['-F', config] : []),
    '-o',
    'BatchMode=yes',
    '-o',
    `ControlPath=${e.controlPath}`,
    ...(e.port !== undefined ? ['-p', String(e.port)] : []),
  ]
}

/**
 * Starts the ControlMaster in the background (`-M -N -f`, ControlPersist): it returns once the
 * connection is authenticated, and the master outlives this process, for every later call.
 */
export function startSshMaster(e: SshEndpoint, opts: { env?: Env; timeoutMs: number; persist?: string }): Promise<CommandResult> {
  const connectS = Math.max(1, Math.ceil(opts.timeoutMs / 1000))
  return runCommand(
    'ssh',
    [
      ...common(e, opts.env),
      '-M',
      '-N',
      '-f',
      '-o',
      `ControlPersist=${opts.persist ?? 'yes'}`,
      '-o',
      `ConnectTimeout=${connectS}`,
      ...KEEPALIVE,
      e.destination,
    ],
    { env: opts.env, timeoutMs: opts.timeoutMs },
  )
}

/** `ssh -O check|exit`: asks the master on the control socket (local, no round trip). */
export function sshControl(e: SshEndpoint, op: 'check' | 'exit', opts: { env?: Env; timeoutMs?: number } = {}): Promise<CommandResult> {
  return runCommand('ssh', [...common(e, opts.env), '-O', op, e.destination], { env: opts.env, timeoutMs: opts.timeoutMs ?? 5_000 })
}

/**
 * The options of every channel through the master (never a master of its own): what runSsh,
 * openSsh and runSshInTerminal pass, and the ssh command git runs (`GIT_SSH_COMMAND`, remote
 * worktrees), which appends the destination and the command itself.
 */
export function channelArgs(e: SshEndpoint, env?: Env): string[] {
  return [...common(e, env), '-o', 'ControlMaster=no']
}

/** Runs `command` on the host through the master and returns its exit code and output (255: ssh's own failure). */
export function runSsh(e: SshEndpoint, command: string, opts: RunOptions): Promise<CommandResult> {
  return runCommand('ssh', [...channelArgs(e, opts.env), '-T', e.destination, command], opts)
}

/** A long-running channel through the master: `command`'s stdin and stdout are the child's pipes. */
export function openSsh(e: SshEndpoint, command: string, opts: { env?: Env } = {}): LaunchedProcess {
  return launchProcess('ssh', [...channelArgs(e, opts.env), '-T', e.destination, command], {
    env: opts.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
}

/** `command` on the host with this terminal as its own (`ssh -t`: `swarm attach`); its exit code. */
export function runSshInTerminal(e: SshEndpoint, command: string, opts: { env?: Env } = {}): Promise<number> {
  return runInTerminal('ssh', [...channelArgs(e, opts.env), '-t', e.destination, command], opts)
}
