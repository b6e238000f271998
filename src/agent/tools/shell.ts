import fs from 'node:fs/promises'
import { StringDecoder } from 'node:string_decoder'
import type { Readable } from 'node:stream'
import { delay } from '../../process/delay.js'
import { type LaunchedProcess, launchProcess } from '../../process/launch.js'
import { KILL_GRACE_MS } from '../../process/signals.js'
import { killProcessGroup } from '../../process/tree.js'

/** How long to wait for the output pipes to close after the command's process group died. */
const STREAM_DRAIN_MS = 250

export interface ShellOptions {
  cwd: string
  env?: NodeJS.ProcessEnv
  signal: AbortSignal
  timeoutMs: number
  /** Characters of output kept: the first and the last half of it. */
  maxOutputChars: number
  graceMs?: number
  onOutput?: (text: string) => void
  /** Written to the command's stdin, then closed (a hook's request); without it stdin is /dev/null. */
  input?: string
  /** Also keep stdout and stderr apart (each capped like `output`): a hook answers on stdout. */
  separateStreams?: boolean
  /** What runs the command: the sandbox's argv (bwrap, or `bash -c command` when unsandboxed); `env` is added to the environment. */
  launch: {
    file: string
    args: string[]
    env?: Record<string, string>
    /** Removed from its environment (the provider keys a sandboxed command does not get). */
    unsetEnv?: readonly string[]
    /** Everything it started dies with it (a pid namespace): nothing is left to kill once it exited. */
    reapsItself?: boolean
    /** Written into a pipe at its fd 3 (bwrap's seccomp program). */
    fd3?: Buffer
  }
}

export interface ShellResult {
  /** stdout and stderr interleaved in arrival order, capped. */
  output: string
  /** Characters cut from the middle of the output. */
  droppedChars: number
  /** With `separateStreams`: each stream on its own. */
  stdout?: string
  stderr?: string
  exitCode: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  aborted: boolean
}

/**
 * Runs the launched command as the leader of its own process group. On timeout or abort the whole
 * group is killed (SIGTERM, SIGKILL after the grace); when the command returns, whatever it
 * left running in the background is killed too, so no call outlives itself.
 */
export async function runShellCommand(options: ShellOptions): Promise<ShellResult> {
  const cwdStat = await fs.stat(options.cwd).catch(() => undefined)
  if (!cwdStat?.isDirectory()) throw new Error(`working directory does not exist: ${options.cwd}`)
  const graceMs = options.graceMs ?? KILL_GRACE_MS
  const output = new HeadTailBuffer(options.maxOutputChars)
  const streams = options.separateStreams
    ? { stdout: new HeadTailBuffer(options.maxOutputChars), stderr: new HeadTailBuffer(options.maxOutputChars) }
    : undefined
  const { child, pid: pgid } = startShell(options)
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve)
    // Kept for the child's lifetime: an 'error' without a listener would crash the process.
    child.on('error', reject)
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
  )
  const closed = Promise.all([
    collect(child.stdout!, output, options.onOutput, streams?.stdout),
    collect(child.stderr!, output, options.onOutput, streams?.stderr),
  ])
  await spawned
  if (options.input !== undefined) {
    // EPIPE when the command exits without reading its input; its result still counts.
    child.stdin?.on('error', () => {})
    child.stdin?.end(options.input)
  }

  let timedOut = false
  let aborted = false
  let killing: Promise<void> | undefined
  const kill = () => (killing ??= killProcessGroup(pgid, graceMs))
  const timer = setTimeout(() => {
    timedOut = true
    void kill()
  }, options.timeoutMs)
  const onAbort = () => {
    aborted = true
    void kill()
  }
  if (options.signal.aborted) onAbort()
  else options.signal.addEventListener('abort', onAbort, { once: true })

  try {
    const exit = await exited
    // Background jobs the command left behind. In a sandbox's pid namespace the kernel killed them
    // already; only its init lingers as a zombie, which would cost a wait for nothing.
    if (!options.launch?.reapsItself) await kill()
    const drained = await Promise.race([closed.then(() => true), delay(STREAM_DRAIN_MS, undefined, { unref: true }).then(() => false)])
    // A process that escaped the group (setsid) may still hold the pipes; stop reading them.
    if (!drained) {
      child.stdout?.destroy()
      child.stderr?.destroy()
    }
    return {
      output: output.text(),
      droppedChars: output.dropped,
      ...(streams && { stdout: streams.stdout.text(), stderr: streams.stderr.text() }),
      exitCode: exit.code,
      signal: exit.signal,
      timedOut,
      aborted,
    }
  } finally {
    clearTimeout(timer)
    options.signal.removeEventListener('abort', onAbort)
  }
}

/**
 * The one place a Bash call's process starts: the sandbox's launch (see command-runner) as the
 * leader of its own process group, tracked by the process module until it exits.
 */
export function startShell(options: Pick<ShellOptions, 'cwd' | 'env' | 'launch' | 'input'>): LaunchedProcess {
  const launch = options.launch
  return launchProcess(launch.file, launch.args, {
    cwd: options.cwd,
    env: launchEnv(options.env ?? process.env, launch),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(launch.fd3 && { fd3: launch.fd3 }),
  })
}

/** The command's environment: the caller's, what the sandbox adds, without what it removes. */
function launchEnv(base: NodeJS.ProcessEnv, launch: ShellOptions['launch']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...launch.env }
  for (const name of launch.unsetEnv ?? []) delete env[name]
  return env
}

function collect(stream: Readable, into: HeadTailBuffer, onOutput?: (text: string) => void, own?: HeadTailBuffer): Promise<void> {
  const decoder = new StringDecoder('utf8')
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      const text = decoder.write(chunk)
      into.append(text)
      own?.append(text)
      onOutput?.(text)
    })
    stream.once('close', () => {
      const rest = decoder.end()
      into.append(rest)
      own?.append(rest)
      resolve()
    })
  })
}

/** Keeps the first and the last `max / 2` characters of a stream of text, counting the rest. */
export class HeadTailBuffer {
  private head = ''
  private tail = ''
  dropped = 0
  constructor(private readonly max: number) {}

  append(text: string): void {
    if (!text) return
    const half = Math.floor(this.max / 2)
    if (this.head.length < half) {
      const take = text.slice(0, half - this.head.length)
      this.head += take
      text = text.slice(take.length)
    }
    if (!text) return
    this.tail += text
    const keep = this.max - half
    if (this.tail.length > keep * 2) this.trimTail(keep)
  }

  text(): string {
    this.trimTail(this.max - Math.floor(this.max / 2))
    if (this.dropped === 0) return this.head + this.tail
    return `${this.head}\n\n[… ${this.dropped} characters of output truncated …]\n\n${this.tail}`
  }

  // Trimming lazily (at 2× the size) keeps appends of many small chunks linear.
  private trimTail(keep: number): void {
    if (this.tail.length <= keep) return
    this.dropped += this.tail.length - keep
    this.tail = this.tail.slice(this.tail.length - keep)
  }
}
