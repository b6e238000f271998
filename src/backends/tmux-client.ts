import { ExitCode, SwarmError } from '../errors.js'
import { type CommandResult, CommandTimeoutError, runCommand } from '../process/launch.js'
// The server this may start serves every team: it must not carry one team's marker.
import { withoutMarker } from '../process/marker.js'
import { waitForExit } from '../process/liveness.js'
import type { Env } from '../home/env.js'

/** Every tmux call gets this long before its process group is killed. */
export const TMUX_TIMEOUT_MS = 5_000
/** What a script of many commands adds to its limit per command (a split and a new pane's setup take ~1 ms each; 25× for a loaded machine). */
export const TMUX_PER_COMMAND_MS = 25

/** The limit of one tmux invocation that runs `commands` commands: it grows with the work. */
export function scaledTimeout(commands: number, base = TMUX_TIMEOUT_MS): number {
  return base + TMUX_PER_COMMAND_MS * Math.max(0, commands)
}
/** The named server swarm uses outside tmux (`tmux -L swarm`). */
export const DEFAULT_SOCKET_NAME = 'swarm'

/** Which tmux server to talk to: a socket name (`-L`) or a socket path (`-S`). */
export type TmuxSocket = { name: string } | { path: string }

/**
 * The server swarm uses: inside tmux the user's own (from $TMUX), else `SWARM_TMUX_SOCKET`
 * (a name, or a path when it contains a slash), else the `swarm` named server.
 */
export function resolveSocket(env: Env = process.env): TmuxSocket {
  if (env.TMUX) return { path: env.TMUX.split(',')[0] }
  return swarmSocket(env)
}

/**
 * `tmux kill-server` on `socket`, returning once the server process is gone: the command itself
 * returns while the server may still be tearing down (a process that still carries its env).
 */
export async function killServer(socket: TmuxSocket, env: Env): Promise<void> {
  const tmux = (...args: string[]) => runCommand('tmux', [...socketArgs(socket), ...args], { env, timeoutMs: TMUX_TIMEOUT_MS }).catch(() => undefined)
  const pid = Number((await tmux('display-message', '-p', '#{pid}'))?.stdout.trim())
  await tmux('kill-server')
  if (pid > 0) await waitForExit([pid], TMUX_TIMEOUT_MS)
}

/** The dedicated swarm server, ignoring $TMUX. */
export function swarmSocket(env: Env = process.env): TmuxSocket {
  const configured = env.SWARM_TMUX_SOCKET
  if (configured?.includes('/')) return { path: configured }
  return { name: configured || DEFAULT_SOCKET_NAME }
}

export function socketArgs(socket: TmuxSocket): string[] {
  return 'path' in socket ? ['-S', socket.path] : ['-L', socket.name]
}

/** How a user would type it: `tmux -L swarm`. */
export function describeSocket(socket: TmuxSocket): string {
  return 'path' in socket
    ? `tmux -S ${shellQuote(socket.path)}`
    : socket.name === DEFAULT_SOCKET_NAME
      ? 'tmux -L swarm'
      : `tmux -L ${shellQuote(socket.name)}`
}

/** The tmux server is not running (or its socket is stale). */
export class TmuxNoServerError extends SwarmError {
  constructor(socket: TmuxSocket, detail: string) {
    super('SWARM_TMUX_NO_SERVER', `no tmux server is running on ${describeSocket(socket)} (${detail.trim()})`, {
      exitCode: ExitCode.notFound,
      hint: 'start the team first ("swarm team create" or "swarm spawn")',
    })
  }
}

/** A tmux command failed for another reason; the message is tmux's own. */
export class TmuxCommandError extends SwarmError {
  constructor(what: string, stderr: string) {
    super('SWARM_TMUX_FAILED', `tmux ${what} failed: ${stderr.trim() || 'no error output'}`, { exitCode: ExitCode.processFailure })
  }
}

const NO_SERVER_RE = /no server running|error connecting to|server exited unexpectedly|lost server/i

export function isNoServer(stderr: string): boolean {
  return NO_SERVER_RE.test(stderr)
}

export interface TmuxClientOptions {
  socket: TmuxSocket
  /** Environment of the tmux client (TMUX_TMPDIR decides where `-L` sockets live). */
  env?: Env
  timeoutMs?: number
  bin?: string
}

/**
 * Runs tmux commands against one server. `source` hands a whole script to `tmux source-file -`
 * on stdin: one process for many commands (~0.1 ms each instead of ~4 ms), and secrets passed
 * with `-e` never appear in any argv.
 */
export class TmuxClient {
  readonly socket: TmuxSocket
  readonly env: Env
  private readonly timeoutMs: number
  private readonly bin: string
  /** How many tmux processes this client started (the benchmark reports it). */
  calls = 0

  constructor(opts: TmuxClientOptions) {
    this.socket = opts.socket
    this.env = opts.env ?? process.env
    this.timeoutMs = opts.timeoutMs ?? TMUX_TIMEOUT_MS
    this.bin = opts.bin ?? 'tmux'
  }

  /**
   * One tmux invocation with argv (never put secrets here). Does not throw on a non-zero exit.
   * A script of `commands` commands gets a limit that grows with them (scaledTimeout).
   */
  async exec(args: string[], input?: string, opts: { commands?: number } = {}): Promise<CommandResult> {
    this.calls++
    const timeoutMs = scaledTimeout(opts.commands ?? 0, this.timeoutMs)
    try {
      // -u: without a UTF-8 locale (LANG unset, C) tmux prints a format's tabs (and non-ASCII) as `_`, and ids could not be read.
      const result = await runCommand(this.bin, ['-u', ...socketArgs(this.socket), ...args], {
        env: withoutMarker(this.env),
        input,
        timeoutMs,
      })
      if (result.code === 127 && !result.stderr) {
        throw new SwarmError('SWARM_TMUX_MISSING', 'tmux is not installed (or not on PATH)', { exitCode: ExitCode.backendUnavailable })
      }
      return result
    } catch (err) {
      if (err instanceof CommandTimeoutError) {
        throw new CommandTimeoutError(
          `tmux (${describeSocket(this.socket)})`,
          timeoutMs,
          `the tmux server is not responding; check it with "${describeSocket(this.socket)} list-sessions"`,
        )
      }
      throw err
    }
  }

  /** Like exec, but a non-zero exit becomes TmuxNoServerError or TmuxCommandError. */
  async run(args: string[], what = args[0] ?? 'command'): Promise<string> {
    const r = await this.exec(args)
    if (r.code !== 0) throw this.failure(what, r.stderr)
    return r.stdout
  }

  /**
   * Runs `lines` (each one tmux command group, already quoted) through `source-file -`. With
   * `startServer`, the server is started first in the same invocation (source-file alone does not).
   * Its limit grows with the number of lines (scaledTimeout).
   */
  async source(lines: string[], opts: { startServer?: boolean; what?: string } = {}): Promise<string> {
    const args = opts.startServer ? ['start-server', ';', 'source-file', '-'] : ['source-file', '-']
    const r = await this.exec(args, lines.join('\n') + '\n', { commands: lines.length })
    if (r.code !== 0) throw this.failure(opts.what ?? 'source-file', r.stderr)
    return r.stdout
  }

  failure(what: string, stderr: string): SwarmError {
    return isNoServer(stderr) ? new TmuxNoServerError(this.socket, stderr) : new TmuxCommandError(what, stderr)
  }
}

/**
 * Quotes one argument for tmux's command parser (config files and `source-file`): single quotes
 * are literal (newlines included); a string with a `'` goes in double quotes, where `\`, `"`, `$`
 * and `~` are escaped and control characters written as octal escapes.
 */
export function tmuxQuote(arg: string): string {
  if (arg.includes('\0')) throw new SwarmError('SWARM_USAGE', 'an argument contains a NUL byte', { exitCode: ExitCode.usage })
  if (!arg.includes("'")) return `'${arg}'`
  let out = '"'
  for (const ch of arg) {
    const code = ch.codePointAt(0)!
    if (ch === '\\' || ch === '"' || ch === '$' || ch === '~') out += '\\' + ch
    else if (code < 0x20 || code === 0x7f) out += '\\' + code.toString(8).padStart(3, '0')
    else out += ch
  }
  return out + '"'
}

/** Joins already-parsed arguments into one tmux command. */
export function tmuxCommand(...args: string[]): string {
  return args.map(tmuxQuote).join(' ')
}

/** Escapes `#` for arguments tmux expands as formats (`-c`, pipe-pane's command). */
export function formatEscape(s: string): string {
  return s.replace(/#/g, '##')
}

/** POSIX shell single-quoting. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}
