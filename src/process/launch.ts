import type { ChildProcess, SpawnOptions, StdioOptions } from 'node:child_process'
import fs from 'node:fs'
import { ExitCode, SwarmError } from '../errors.js'
import { childProcess } from './child-process.js'
import { delay } from './delay.js'
import { onCleanup, onExit } from './handlers.js'
import { KILL_GRACE_MS, killGroup, signalExitCode } from './signals.js'
import { killTree } from './tree.js'
import type { Env } from '../home/env.js'

/*
 * Starting processes (on node:child_process — execa cost every CLI call ~15 ms of start-up for
 * what these few lines do, measured by bench/cli.mjs): every child is the leader of its own process group, tracked
 * until it exits, and taken down with its whole tree when swarm exits or is stopped. Short helper
 * commands (tmux, git, ps, it2) run to completion with a timeout and AbortSignal cancellation.
 */

/** Every spawn below: node:child_process at the first (child-process.ts). */
function spawn(file: string, args: readonly string[], opts: SpawnOptions): ChildProcess {
  return childProcess().spawn(file, args, opts)
}

/** How long output is still read after a child exits (a grandchild may hold its pipes). */
const PIPE_DRAIN_MS = 100
/** Default limit for a short helper command (tmux, it2, git). */
export const COMMAND_TIMEOUT_MS = 5_000

export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
  /** Why it never started (`spawn foo ENOENT`); then `code` is 127. */
  error?: string
}

/** The shell's reading of an exit: its code, 128 + N for death by signal N, 127 when it never started. */
export function shellExitCode(s: ExitStatus): number {
  return s.code ?? (s.signal ? signalExitCode(s.signal) : 1)
}

export interface LaunchOptions {
  cwd?: string
  /** The child's whole environment (not merged with this process's); default process.env. */
  env?: Env
  /** Default 'ignore' for all three. */
  stdio?: StdioOptions
  /** Written into a pipe at the child's fd 3, which is then closed (bwrap's `--seccomp 3` reads it to EOF). */
  fd3?: Uint8Array
}

/** A child started as the leader of its own process group, tracked until it exits. */
export interface LaunchedProcess {
  readonly pid: number
  readonly child: ChildProcess
  /** Resolves when the child exited and its pipes were read (never rejects); a missing program is code 127. */
  readonly exited: Promise<ExitStatus>
  /** SIGTERM to the group and its descendants, SIGKILL after `graceMs`; resolves once gone. */
  stop(graceMs?: number): Promise<void>
}

/** Live children: stopped (within the cleanup limit) on a stop signal, SIGKILLed on 'exit'. */
const live = new Map<number, LaunchedProcess>()
let disposeHooks: (() => void) | undefined

/**
 * Spawns `file args` detached (a new process group whose id is its pid) and tracks it. Spawn
 * failures (ENOENT…) surface through `exited` (code 127), never as an unhandled 'error'.
 */
export function launchProcess(file: string, args: string[], opts: LaunchOptions = {}): LaunchedProcess {
  return start(file, args, { ...opts, buffer: false }).handle
}

function start(file: string, args: string[], opts: LaunchOptions & { buffer: boolean; input?: string }) {
  const stdio = withFd3(opts.stdio ?? 'ignore', opts.fd3)
  const child = spawn(file, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio, detached: true })
  const result = collect(child, { buffer: opts.buffer, input: opts.input, fd3: opts.fd3 })
  const exited = result.then((r) => r.status)
  const pid = child.pid ?? -1
  const handle: LaunchedProcess = {
    pid,
    child,
    exited,
    async stop(graceMs = KILL_GRACE_MS) {
      if (pid > 0) await killTree(pid, { graceMs })
      await Promise.race([exited, delay(graceMs)])
    },
  }
  if (pid > 0) track(handle)
  return { handle, result }
}

/** A child's end: how it exited, and (when buffered) what it wrote. */
interface Collected {
  status: ExitStatus
  stdout: string
  stderr: string
}

/**
 * Feeds `input` and `fd3` to the child, reads its output when `buffer`, and resolves (never
 * rejects) once it exited and its pipes were read — or PIPE_DRAIN_MS after the exit, since a
 * grandchild may hold them open forever. The setImmediate lets one more poll phase read what the
 * child wrote before exiting (on a loaded machine the timer can fire first). A program that never
 * started is code 127 with its reason.
 */
function collect(child: ChildProcess, opts: { buffer: boolean; input?: string; fd3?: Uint8Array }): Promise<Collected> {
  const out: string[] = []
  const err: string[] = []
  if (opts.buffer) {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => out.push(d))
    child.stderr?.setEncoding('utf8').on('data', (d: string) => err.push(d))
  }
  // A child that exits without reading its input closes the pipe: EPIPE is its answer, not ours.
  const ignore = () => undefined
  if (opts.input !== undefined && child.stdin) child.stdin.on('error', ignore).end(opts.input)
  const fd3 = child.stdio[3] as NodeJS.WritableStream | null | undefined
  if (opts.fd3 && fd3) fd3.on('error', ignore).end(opts.fd3)
  return new Promise((resolve) => {
    let exit: ExitStatus | undefined
    const done = (status: ExitStatus) => {
      resolve({ status, stdout: out.join(''), stderr: err.join('') })
    }
    child.on('error', (e) => {
      // Spawn failed (ENOENT…): there is no exit to wait for.
      if (child.pid === undefined) done({ code: 127, signal: null, error: e.message })
    })
    child.once('exit', (code, signal) => {
      exit = { code, signal }
      const stopReading = () => {
        for (const s of [child.stdout, child.stderr]) s?.destroy()
        done(exit!)
      }
      setTimeout(() => setImmediate(stopReading), PIPE_DRAIN_MS)
    })
    child.once('close', () => {
      if (exit) done(exit)
    })
  })
}

/** The Uint8Array given as an extra fd is written into a pipe there and closed (collect). */
function withFd3(stdio: StdioOptions, fd3: Uint8Array | undefined): StdioOptions {
  if (!fd3) return stdio
  const [stdin, stdout, stderr] = typeof stdio === 'string' ? [stdio, stdio, stdio] : stdio
  return [stdin, stdout, stderr, 'pipe']
}

function track(p: LaunchedProcess): void {
  live.set(p.pid, p)
  disposeHooks ??= combine(
    onExit(() => {
      for (const pid of live.keys()) killGroup(pid, 'SIGKILL')
    }),
    onCleanup(() => Promise.all([...live.values()].map((c) => c.stop(KILL_GRACE_MS))).then(() => undefined)),
  )
  void p.exited.then(() => {
    live.delete(p.pid)
    if (live.size === 0) {
      disposeHooks?.()
      disposeHooks = undefined
    }
  })
}

function combine(...fns: Array<() => void>): () => void {
  return () => {
    for (const f of fns) f()
  }
}

export interface CommandResult {
  code: number
  stdout: string
  stderr: string
}

export interface RunOptions {
  env?: Env
  cwd?: string
  /** Written to stdin, then stdin is closed. */
  input?: string
  /** Written into a pipe at the child's fd 3, then closed. */
  fd3?: Uint8Array
  timeoutMs?: number
  signal?: AbortSignal
}

/** A helper command did not finish in time; its process group was killed. */
export class CommandTimeoutError extends SwarmError {
  constructor(command: string, timeoutMs: number, hint?: string) {
    super('SWARM_COMMAND_TIMEOUT', `${command} did not answer within ${timeoutMs} ms`, { exitCode: ExitCode.timeout, hint })
  }
}

/**
 * Runs a short helper command to completion and returns its exit code and output (it does not
 * throw on a non-zero exit). Its process group is killed when `timeoutMs` passes
 * (CommandTimeoutError) or `signal` aborts (throws the abort reason). A missing program is 127;
 * death by signal N is 128 + N.
 */
export async function runCommand(file: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
  const timeoutMs = opts.timeoutMs ?? COMMAND_TIMEOUT_MS
  if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted')
  const { handle, result } = start(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    input: opts.input ?? '',
    ...(opts.fd3 && { fd3: opts.fd3 }),
    buffer: true,
  })
  const stop = new AbortController()
  const outcome = await Promise.race([
    result.then((r) => ({ kind: 'exit' as const, r })),
    delay(timeoutMs, stop.signal).then(() => ({ kind: 'timeout' as const })),
    ...(opts.signal ? [delay(2 ** 31 - 1, AbortSignal.any([opts.signal, stop.signal])).then(() => ({ kind: 'abort' as const }))] : []),
  ])
  stop.abort()
  if (outcome.kind !== 'exit') {
    killGroup(handle.pid, 'SIGKILL')
    if (outcome.kind === 'abort') throw opts.signal?.reason ?? new Error('aborted')
    throw new CommandTimeoutError(`${file} ${args[0] ?? ''}`.trim(), timeoutMs)
  }
  return { code: shellExitCode(outcome.r.status), stdout: outcome.r.stdout, stderr: outcome.r.stderr }
}

/** A program in the foreground of this terminal (startInTerminal). */
export interface TerminalProcess {
  /** Undefined when it could not be started (then `exited` says why). */
  readonly pid: number | undefined
  /** Resolves when it exited (never rejects); a missing program is code 127 with `error` set. */
  readonly exited: Promise<ExitStatus>
}

/**
 * Starts `file args` in this terminal: stdio inherited, in this process's group so that it owns
 * the terminal (`tmux attach`, an agent CLI in its pane). Not tracked: it ends with the terminal
 * session, like its parent, and whoever started it decides when to stop it (killTree).
 */
export function startInTerminal(file: string, args: string[], opts: { env?: Env; fd3?: Uint8Array } = {}): TerminalProcess {
  const child = spawn(file, args, { env: opts.env ?? process.env, stdio: withFd3('inherit', opts.fd3) })
  return { pid: child.pid, exited: collect(child, { buffer: false, ...(opts.fd3 && { fd3: opts.fd3 }) }).then((r) => r.status) }
}

/** startInTerminal, resolving with its exit code (shellExitCode). */
export async function runInTerminal(file: string, args: string[], opts: { env?: Env } = {}): Promise<number> {
  return shellExitCode(await startInTerminal(file, args, opts).exited)
}

/**
 * Starts `file args` to outlive this process (the remote link of a team): a session of its own,
 * stdin closed, stdout and stderr appended to `logFile`, not tracked here — it is found again by
 * its pid file and the team marker in `env` (`team delete` reaps it). Returns its pid.
 */
export function launchDaemon(file: string, args: string[], opts: { env: Env; logFile: string; cwd?: string }): number {
  const log = fs.openSync(opts.logFile, 'a', 0o600)
  try {
    const child = spawn(file, args, { ...(opts.cwd && { cwd: opts.cwd }), env: opts.env, stdio: ['ignore', log, log], detached: true })
    child.on('error', () => undefined) // a missing program: the caller finds no process behind the pid file
    child.unref()
    return child.pid ?? -1
  } finally {
    fs.closeSync(log)
  }
}
