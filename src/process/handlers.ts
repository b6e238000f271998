import { inspect } from 'node:util'
import { delay } from './delay.js'
import { CLEANUP_TIME_LIMIT_MS, STOP_SIGNALS, type StopSignal, signalExitCode } from './signals.js'

/*
 * The only place in swarm that listens to the process itself ('exit', SIGTERM/SIGINT/SIGHUP,
 * uncaught errors). Listeners are installed when the first hook is registered and removed with
 * the last one (Playwright's processLauncher), so an idle module changes nothing about how Node
 * dies. A stop signal runs the cleanups, all within CLEANUP_TIME_LIMIT_MS, then exits 128+N —
 * unless the program has claimed the signals (onStopSignal), which then decides what they mean.
 */

type Cleanup = () => void | Promise<void>
type StopListener = (signal: StopSignal) => void
/** Returns true when it handled the error (it belonged to a teammate). */
type CrashRoute = (event: 'uncaughtException' | 'unhandledRejection', err: unknown) => boolean

const exitHooks = new Set<() => void>()
const cleanups = new Set<Cleanup>()
const stopListeners = new Set<StopListener>()
const ignoredSignals = new Set<StopSignal>()
const crashRoutes = new Set<CrashRoute>()

/** A synchronous hook for the 'exit' event (only synchronous work is possible there). */
export function onExit(fn: () => void): () => void {
  return add(exitHooks, fn)
}

/** Work to do (within the time limit) when swarm is stopped by a signal it has not claimed. */
export function onCleanup(fn: Cleanup): () => void {
  return add(cleanups, fn)
}

/**
 * Claims SIGTERM/SIGINT/SIGHUP: the first one calls every listener (the program shuts down
 * through its own `finally` blocks); a second one exits at once with 128+N.
 */
export function onStopSignal(fn: StopListener): () => void {
  return add(stopListeners, fn)
}

/**
 * Ignores a stop signal while the returned function is not called (an agent CLI's wrapper: Ctrl-C
 * in its pane is for the CLI, which gets it from the terminal itself).
 */
export function ignoreSignal(signal: StopSignal): () => void {
  if (ignoredSignals.has(signal)) return () => undefined
  return add(ignoredSignals, signal)
}

/**
 * Resolves on the next stop signal (claimed while waiting), or with undefined when `until` aborts;
 * the claim is released either way.
 */
export function nextStopSignal(until?: AbortSignal): Promise<StopSignal | undefined> {
  return new Promise((resolve) => {
    const finish = (sig: StopSignal | undefined) => {
      release()
      until?.removeEventListener('abort', onAbort)
      resolve(sig)
    }
    const onAbort = () => finish(undefined)
    const release = onStopSignal(finish)
    if (until?.aborted) onAbort()
    else until?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Keeps SIGUSR1 from opening Node's inspector (on 127.0.0.1:9229, where any local process can run
 * code in it): a CLI teammate in swarm's sandbox shares its pane wrapper's process group, so
 * `kill -USR1 0` from inside would open that door outside the sandbox. Once per process.
 */
export function refuseDebuggerSignal(): void {
  if (debuggerSignalRefused) return
  debuggerSignalRefused = true
  process.on('SIGUSR1', () => undefined)
}
let debuggerSignalRefused = false

/** Routes uncaught exceptions and unhandled rejections; an error no route takes is printed and exits 1. */
export function onCrash(fn: CrashRoute): () => void {
  return add(crashRoutes, fn)
}

/** Runs every cleanup, all within `timeLimitMs`; a failing one is reported, never thrown. */
export async function runCleanups(timeLimitMs = CLEANUP_TIME_LIMIT_MS): Promise<void> {
  const work = [...cleanups].map(async (fn) => {
    try {
      await fn()
    } catch (err) {
      process.stderr.write(`swarm: cleanup failed: ${err instanceof Error ? err.message : String(err)}\n`)
    }
  })
  await Promise.race([Promise.all(work), delay(timeLimitMs, undefined, { unref: true })])
}

/** Which process-wide listeners are installed now (for tests and `doctor`-style checks). */
export function installedHandlers(): { exit: boolean; signals: boolean; crash: boolean } {
  return { exit: exitInstalled, signals: signalsInstalled, crash: crashInstalled }
}

function add<T>(set: Set<T>, fn: T): () => void {
  set.add(fn)
  sync()
  let removed = false
  return () => {
    if (removed) return
    removed = true
    set.delete(fn)
    sync()
  }
}

let exitInstalled = false
let signalsInstalled = false
let crashInstalled = false
let stopping = false

function runExitHooks(): void {
  for (const fn of exitHooks) {
    try {
      fn()
    } catch {
      // 'exit' cannot report anything useful any more; the other hooks still run.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  const sig = signal as StopSignal
  if (ignoredSignals.has(sig)) return
  if (stopping) process.exit(signalExitCode(sig))
  stopping = true
  if (stopListeners.size) {
    for (const fn of [...stopListeners]) fn(sig)
    return
  }
  void runCleanups().finally(() => process.exit(signalExitCode(sig)))
}

function onUncaughtException(err: unknown): void {
  crashed('uncaughtException', err)
}
function onUnhandledRejection(err: unknown): void {
  crashed('unhandledRejection', err)
}
function crashed(event: 'uncaughtException' | 'unhandledRejection', err: unknown): void {
  for (const route of crashRoutes) if (route(event, err)) return
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : inspect(err)}\n`)
  process.exit(1)
}

/** Installs or removes each listener so that it is there exactly while something needs it. */
function sync(): void {
  const wantExit = exitHooks.size > 0
  if (wantExit !== exitInstalled) {
    exitInstalled = wantExit
    if (wantExit) process.on('exit', runExitHooks)
    else process.off('exit', runExitHooks)
  }
  const wantSignals = cleanups.size + stopListeners.size + ignoredSignals.size > 0
  if (wantSignals !== signalsInstalled) {
    signalsInstalled = wantSignals
    for (const sig of STOP_SIGNALS) {
      if (wantSignals) process.on(sig, onSignal)
      else process.off(sig, onSignal)
    }
    if (!wantSignals) stopping = false
  }
  const wantCrash = crashRoutes.size > 0
  if (wantCrash !== crashInstalled) {
    crashInstalled = wantCrash
    if (wantCrash) {
      process.on('uncaughtException', onUncaughtException)
      process.on('unhandledRejection', onUnhandledRejection)
    } else {
      process.off('uncaughtException', onUncaughtException)
      process.off('unhandledRejection', onUnhandledRejection)
    }
  }
}
