import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import { ExitCode, SwarmError } from '../errors.js'

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1_000
/** Hard limit for draining every live child when swarm itself exits. */
export const CLEANUP_TIME_LIMIT_MS = 3_000
/** How long output is still read after a child exits (a grandchild may hold its pipes). */
const PIPE_DRAIN_MS = 100
/** Default limit for a short helper command (tmux, it2, ps). */
export const COMMAND_TIMEOUT_MS = 5_000

type Env = NodeJS.ProcessEnv

export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface LaunchOptions {
  cwd?: string
  env?: Env
  /** Default 'ignore' for all three. */
  stdio?: StdioOptions
}

/** A child started as the leader of its own process group, tracked until it exits. */
export interface LaunchedProcess {
  readonly pid: number
  readonly child: ChildProcess
  /** Resolves when the child exits (never rejects). */
  readonly exited: Promise<ExitStatus>
  /** SIGTERM to the group and its descendants, SIGKILL after `graceMs`; resolves once gone. */
  stop(graceMs?: number): Promise<void>
}

/** A live child is drained on exit: its group is killed, within CLEANUP_TIME_LIMIT_MS. */
const live = new Map<number, LaunchedProcess>()
const cleanups = new Set<() => void | Promise<void>>()
let handlersInstalled = false

/**
 * Spawns `file args` detached (a new process group whose id is its pid), registers it in the
 * live-children registry and installs the exit handlers on first use (Playwright's
 * processLauncher). Spawn failures (ENOENT…) surface through `exited` (code 127) and an 'error'
 * that is never unhandled.
 */
export function launchProcess(file: string, args: string[], opts: LaunchOptions = {}): LaunchedProcess {
  installExitHandlers()
  const child = spawn(file, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: opts.stdio ?? 'ignore',
    detached: true,
  })
  let spawnError: Error | undefined
  child.on('error', (err) => (spawnError = err))
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('close', (code, signal) => resolve({ code: spawnError ? 127 : code, signal }))
    child.once('exit', (code, signal) => {
      // 'close' waits for the end of stdout/stderr, which a grandchild may hold open forever:
      // give the pipes a moment, then stop waiting for them. The setImmediate lets one more poll
      // phase read what the child wrote before exiting: on a loaded machine the timer can fire
      // before the loop has read it.
      setTimeout(
        () =>
          setImmediate(() => {
            child.stdout?.destroy()
            child.stderr?.destroy()
            resolve({ code, signal })
          }),
        PIPE_DRAIN_MS,
      )
    })
    child.once('error', () => {
      // A child that never started emits 'error' without 'close' on some Node versions.
      if (child.pid === undefined) resolve({ code: 127, signal: null })
    })
  })
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
  if (pid > 0) {
    live.set(pid, handle)
    void exited.then(() => live.delete(pid))
  }
  return handle
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
 * throw on a non-zero exit). It runs in its own process group, which is killed when `timeoutMs`
 * passes (CommandTimeoutError) or `signal` aborts. A missing executable is code 127.
 */
export async function runCommand(file: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
  const timeoutMs = opts.timeoutMs ?? COMMAND_TIMEOUT_MS
  const proc = launchProcess(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] })
  const { child } = proc
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  child.stdin?.on('error', () => {
    // EPIPE when the command exits without reading its input; its exit code tells what happened.
  })
  child.stdin?.end(opts.input ?? '')
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const outcome = await Promise.race([
    proc.exited.then((s) => ({ kind: 'exit' as const, s })),
    new Promise<{ kind: 'timeout' }>((resolve) => (timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs))),
    new Promise<{ kind: 'abort' }>((resolve) => {
      if (!opts.signal) return
      onAbort = () => resolve({ kind: 'abort' })
      if (opts.signal.aborted) onAbort()
      else opts.signal.addEventListener('abort', onAbort, { once: true })
    }),
  ])
  clearTimeout(timer)
  if (onAbort) opts.signal?.removeEventListener('abort', onAbort)
  if (outcome.kind !== 'exit') {
    killGroup(proc.pid, 'SIGKILL')
    if (outcome.kind === 'abort') throw opts.signal?.reason ?? new Error('aborted')
    throw new CommandTimeoutError(`${file} ${args[0] ?? ''}`.trim(), timeoutMs)
  }
  const { code, signal } = outcome.s
  return { code: code ?? (signal ? 128 + signalNumber(signal) : 1), stdout, stderr }
}

/**
 * True when `pid` is a running process. A zombie counts as gone: on machines whose PID 1 does not
 * reap orphans (containers), a killed orphan stays a zombie forever.
 */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  return !isZombie(pid)
}

function isZombie(pid: number): boolean {
  if (!HAS_PROC) return false // elsewhere processTree/waitForExit ask ps
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
  } catch {
    return false // vanished between the two checks: the caller's next look sees it gone
  }
}
const HAS_PROC = fs.existsSync('/proc/self/stat')

/** Sends `signal` to the process group `pgid`; false when the group is gone. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGTERM'): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false // ESRCH: nothing left in the group
  }
}

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {
    // ESRCH: already gone, which is what we want.
  }
}

interface PsRow {
  pid: number
  ppid: number
  pgid: number
  stat: string
}

async function psTable(): Promise<PsRow[]> {
  // One `ps` for the whole table (Linux and macOS both accept these columns).
  const child = spawn('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat='], { stdio: ['ignore', 'pipe', 'ignore'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS)
  await new Promise<void>((resolve) => {
    child.once('close', () => resolve())
    child.once('error', () => resolve())
  })
  clearTimeout(timer)
  const rows: PsRow[] = []
  for (const line of out.split('\n')) {
    const [pid, ppid, pgid, stat] = line.trim().split(/\s+/)
    if (!pid || !stat) continue
    rows.push({ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), stat })
  }
  return rows
}

/**
 * Every live process that belongs to `rootPid`'s tree: the root, the members of its process group
 * (pgid = rootPid) and all their descendants (which may have started groups of their own).
 * Zombies, this process and its ancestors are left out.
 */
export async function processTree(rootPid: number): Promise<number[]> {
  return (await processTrees([rootPid])).get(rootPid) ?? []
}

/** processTree for several roots with one `ps`. */
export async function processTrees(rootPids: number[]): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>()
  if (rootPids.length === 0) return result
  const rows = (await psTable()).filter((r) => !r.stat.startsWith('Z'))
  const byPid = new Map(rows.map((r) => [r.pid, r]))
  const children = new Map<number, number[]>()
  for (const r of rows) children.set(r.ppid, [...(children.get(r.ppid) ?? []), r.pid])
  const protectedPids = new Set<number>()
  for (let pid: number | undefined = process.pid; pid && pid > 1 && !protectedPids.has(pid); pid = byPid.get(pid)?.ppid) protectedPids.add(pid)
  for (const root of rootPids) {
    const found = new Set<number>()
    const queue = [root, ...rows.filter((r) => r.pgid === root).map((r) => r.pid)]
    while (queue.length) {
      const pid = queue.pop()!
      if (found.has(pid) || pid <= 1 || protectedPids.has(pid) || !byPid.has(pid)) continue
      found.add(pid)
      queue.push(...(children.get(pid) ?? []))
    }
    result.set(root, [...found])
  }
  return result
}

export interface KillTreeOptions {
  /** Time between SIGTERM and SIGKILL; 0 sends SIGKILL at once. */
  graceMs?: number
  /** The tree, listed beforehand (processTree); listed now when absent. */
  pids?: number[]
}

/**
 * Kills `rootPid`'s whole tree (see processTree): SIGTERM to every member and to the group,
 * SIGKILL to whatever is left after `graceMs`. List the tree before anything else can signal it:
 * an orphan is re-parented to init and could no longer be found. Never signals this process or
 * its ancestors. Resolves with the pids that were signalled.
 */
export async function killTree(rootPid: number, opts: KillTreeOptions = {}): Promise<number[]> {
  const graceMs = opts.graceMs ?? KILL_GRACE_MS
  const pids = opts.pids ?? (await processTree(rootPid))
  const groupIsOurs = ownGroup() === rootPid
  const first: NodeJS.Signals = graceMs > 0 ? 'SIGTERM' : 'SIGKILL'
  if (!groupIsOurs) killGroup(rootPid, first)
  for (const pid of pids) killPid(pid, first)
  if (graceMs > 0 && !(await waitForExit(pids, graceMs))) {
    if (!groupIsOurs) killGroup(rootPid, 'SIGKILL')
    for (const pid of pids) if (isAlive(pid)) killPid(pid, 'SIGKILL')
    await waitForExit(pids, 500)
  }
  return pids
}

function ownGroup(): number | undefined {
  if (!HAS_PROC) return undefined
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
  } catch {
    return undefined // without /proc the group check is skipped; processTree still spares our ancestors
  }
}

/** Polls until none of `pids` is alive; false on timeout. */
export async function waitForExit(pids: number[], timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (let round = 1; ; round++) {
    let alive = pids.filter(isAlive)
    // Without /proc, zombies look alive to kill(0): ask ps now and then.
    if (alive.length && !HAS_PROC && round % 4 === 0) {
      const running = new Set((await psTable()).filter((r) => !r.stat.startsWith('Z')).map((r) => r.pid))
      alive = alive.filter((pid) => running.has(pid))
    }
    if (alive.length === 0) return true
    if (Date.now() >= deadline || signal?.aborted) return false
    await delay(Math.min(25, Math.max(1, deadline - Date.now())), signal)
  }
}

/** Registers a cleanup to run when swarm exits or is interrupted; returns its unregister function. */
export function registerCleanup(fn: () => void | Promise<void>): () => void {
  installExitHandlers()
  cleanups.add(fn)
  return () => cleanups.delete(fn)
}

/** Children launched by this process that are still running. */
export function liveChildren(): number[] {
  return [...live.keys()]
}

/**
 * Stops every live child (SIGTERM to each group, SIGKILL after the grace) and runs the registered
 * cleanups, all within `timeLimitMs`.
 */
export async function drainChildren(timeLimitMs = CLEANUP_TIME_LIMIT_MS): Promise<void> {
  const grace = Math.min(KILL_GRACE_MS, Math.floor(timeLimitMs / 2))
  const work = [
    ...[...cleanups].map(async (fn) => {
      try {
        await fn()
      } catch (err) {
        process.stderr.write(`swarm: cleanup failed: ${(err as Error).message}\n`)
      }
    }),
    ...[...live.values()].map((p) => p.stop(grace)),
  ]
  await Promise.race([Promise.all(work), delay(timeLimitMs)])
  killAllSync()
}

function killAllSync(): void {
  for (const pid of live.keys()) killGroup(pid, 'SIGKILL')
}

const SIGNAL_EXIT: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }

function installExitHandlers(): void {
  if (handlersInstalled) return
  handlersInstalled = true
  // 'exit' allows only synchronous work: SIGKILL whatever is still registered.
  process.on('exit', killAllSync)
  for (const sig of Object.keys(SIGNAL_EXIT) as NodeJS.Signals[]) {
    process.on(sig, () => {
      // A listener replaces Node's default of dying at once. When the program has claimed the
      // signals (claimSignals), it decides what they mean (and drains when it leaves); otherwise
      // drain and exit as Node would have, a second signal exiting at once. Counting listeners
      // does not work: proper-lockfile's signal-exit listens too, and defers to anyone else.
      if (programOwnsSignals) return
      if (draining) process.exit(SIGNAL_EXIT[sig])
      draining = true
      void drainChildren().finally(() => process.exit(SIGNAL_EXIT[sig]))
    })
  }
}
let draining = false
let programOwnsSignals = false

/** The program handles SIGTERM/SIGINT/SIGHUP itself (a graceful shutdown); this module stands aside. */
export function claimSignals(): void {
  programOwnsSignals = true
}

function signalNumber(signal: NodeJS.Signals): number {
  return os.constants.signals[signal] ?? 0
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}
