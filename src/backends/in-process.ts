import { inspect } from 'node:util'
import pc from 'picocolors'
import { ConflictError } from '../errors.js'
import type { InProcessBackend } from './backend.js'
import type { NewMessage } from '../mailbox/entry.js'
import type { InboxMessage } from '../mailbox/types.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { paintAgent } from '../terminal/colors.js'
import { delay } from '../process/delay.js'
import { onCleanup, onCrash } from '../process/handlers.js'
import { type LaunchedProcess, launchProcess } from '../process/launch.js'
import { reapMarked } from '../process/reap.js'
import { teamDir } from '../home/paths.js'
import { validateSpawnConfig } from './spawn-config.js'
import { gracefulStop, sendToInbox } from './shutdown.js'
import { teammateStorage } from './teammate-context.js'
import type {
  ExecutorOptions,
  InProcessExecutor,
  InProcessSpawnConfig,
  ProcessState,
  SpawnedTeammate,
  TeammateContext,
  TerminateOptions,
  TerminateOutcome,
} from './types.js'

/** How long kill waits for an aborted teammate's function to return before calling it dead. */
const ABORT_WAIT_MS = 1_000

interface Running {
  ctx: TeammateContext
  controller: AbortController
  children: Set<LaunchedProcess>
  state: ProcessState
  done: Promise<ProcessState>
  settle(state: ProcessState): void
}

/** Teammates whose code is running, found from their context by the crash handlers. */
const byContext = new WeakMap<TeammateContext, Running>()
let alive = 0
let handlersInstalled = false

/**
 * Teammates inside the leader's process (docs/architecture.md §3, §5), each in its own AsyncLocalStorage context
 * with its identity, cwd and AbortController. A throw, a rejection or an uncaught error in one
 * teammate's async tree ends that teammate only — never another one or the leader.
 */
export class InProcessTeammates implements InProcessExecutor {
  readonly type = 'in-process' as const
  readonly kind = 'in-process' as const
  private readonly running = new Map<string, Running>()
  private readonly colors = pc.createColors(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR)
  private unregister?: () => void

  constructor(private readonly opts: ExecutorOptions = {}) {}

  async spawn(config: InProcessSpawnConfig): Promise<SpawnedTeammate> {
    const agentId = validateSpawnConfig(config)
    if (this.running.get(agentId)?.state.state === 'alive') {
      throw new ConflictError('SWARM_TEAMMATE_RUNNING', `${agentId} is already running in this process`)
    }
    const controller = new AbortController()
    const children = new Set<LaunchedProcess>()
    const env = { ...config.env }
    const ctx: TeammateContext = Object.freeze({
      team: config.team,
      name: config.name,
      agentId,
      cwd: config.cwd,
      color: config.color,
      env,
      signal: controller.signal,
      print: (text: string) => this.print(config.name, config.color, text),
      launch: (file: string, args: string[], o = {}) => {
        const child = launchProcess(file, args, { cwd: config.cwd, env: { ...process.env, ...env }, ...o })
        children.add(child)
        void child.exited.then(() => children.delete(child))
        return child
      },
    })
    let settle!: (s: ProcessState) => void
    const done = new Promise<ProcessState>((resolve) => (settle = resolve))
    const record: Running = {
      ctx,
      controller,
      children,
      state: { state: 'alive' },
      done,
      settle: (state) => {
        if (record.state.state !== 'alive') return
        record.state = state
        alive--
        if (state.state === 'dead') controller.abort(new Error(state.reason))
        // What the teammate started dies with it.
        void Promise.all([...children].map((c) => c.stop()))
        settle(state)
        if (alive === 0) this.uninstallIfIdle()
      },
    }
    this.running.set(agentId, record)
    byContext.set(ctx, record)
    alive++
    this.install()
    teammateStorage.run(ctx, () => {
      Promise.resolve()
        .then(() => config.run(ctx))
        .then(
          (code) =>
            record.settle(
              // Returning because kill aborted it is still being killed.
              controller.signal.aborted ? { state: 'dead', reason: 'killed' } : { state: 'exited', code: typeof code === 'number' ? code : 0 },
            ),
          (err) => record.settle(crashState(ctx, err, this)),
        )
    })
    return { agentId, backendType: 'in-process', paneId: 'in-process', pid: process.pid }
  }

  /** A teammate's line (ctx.print: a crash's message, a notice), neutralised: text it carries is data, never terminal control. */
  private print(name: string, color: string | undefined, raw: string): void {
    const text = terminalSafe(raw)
    const own = this.opts.outputFor?.(name)
    if (own) {
      own(text.endsWith('\n') ? text : `${text}\n`)
      return
    }
    const prefix = `${paintAgent(this.colors, color, name)} │ `
    const lines = text.replace(/\n$/, '').split('\n')
    const out = lines.map((l) => prefix + l).join('\n') + '\n'
    if (this.opts.output) this.opts.output(out)
    else process.stdout.write(out)
  }

  /** Reports a crash on the leader's terminal. */
  reportCrash(ctx: TeammateContext, err: unknown): void {
    ctx.print(`crashed: ${err instanceof Error ? (err.stack ?? err.message) : inspect(err)}`)
  }

  sendMessage(agentId: string, message: NewMessage | InboxMessage): Promise<void> {
    return sendToInbox(agentId, message, this.opts)
  }

  async terminate(agentId: string, reason?: string, opts: TerminateOptions = {}): Promise<TerminateOutcome> {
    return gracefulStop(this, agentId, reason, opts, this.opts)
  }

  /** Aborts the teammate's signal, kills what it launched, and waits briefly for its function. */
  async kill(agentId: string): Promise<void> {
    const r = this.running.get(agentId)
    if (r?.state.state !== 'alive') return
    r.controller.abort(new Error('killed'))
    await Promise.all([...r.children].map((c) => c.stop()))
    // Its Bash commands carry its marker: one that escaped its group (setsid) is found by it.
    await reapMarked(teamDir(r.ctx.team, this.opts.env), { agentIds: [agentId] })
    await Promise.race([r.done, delay(ABORT_WAIT_MS)])
    r.settle({ state: 'dead', reason: 'killed' })
  }

  async isActive(agentId: string): Promise<boolean> {
    return this.running.get(agentId)?.state.state === 'alive'
  }

  async status(agentIds: string[]): Promise<Map<string, ProcessState>> {
    return new Map(agentIds.map((id) => [id, this.running.get(id)?.state ?? { state: 'dead', reason: 'not running in this process' }]))
  }

  wait(agentId: string): Promise<ProcessState> {
    return this.running.get(agentId)?.done ?? Promise.resolve({ state: 'dead', reason: 'not running in this process' })
  }

  async killMany(agentIds: string[]): Promise<void> {
    await Promise.all(agentIds.map((id) => this.kill(id)))
  }

  async killAll(): Promise<void> {
    await this.killMany([...this.running.keys()])
  }

  private install(): void {
    // The leader going away takes its in-process teammates (and what they launched) with it.
    this.unregister ??= onCleanup(() => this.killAll())
    installCrashHandlers()
  }

  private uninstallIfIdle(): void {
    if ([...this.running.values()].some((r) => r.state.state === 'alive')) return
    this.unregister?.()
    this.unregister = undefined
  }
}

function crashState(ctx: TeammateContext, err: unknown, executor: InProcessTeammates): ProcessState {
  if (ctx.signal.aborted) return { state: 'dead', reason: 'killed' }
  executor.reportCrash(ctx, err)
  return { state: 'dead', reason: `crashed: ${err instanceof Error ? err.message : String(err)}` }
}

/**
 * An error thrown from a timer or a floating promise of a teammate reaches the process handlers
 * still inside its AsyncLocalStorage context: it ends that teammate only. Errors of the leader
 * itself keep Node's behaviour (print and exit 1; process/handlers.ts).
 */
function installCrashHandlers(): void {
  if (handlersInstalled) return
  handlersInstalled = true
  // Kept for the process's lifetime: a dead teammate's timers may still throw in its context.
  onCrash((event, err) => {
    const ctx = teammateStorage.getStore()
    const record = ctx && byContext.get(ctx)
    if (!ctx || !record) return false
    if (record.state.state === 'alive') {
      ctx.print(`crashed (${event}): ${err instanceof Error ? (err.stack ?? err.message) : inspect(err)}`)
      record.settle({ state: 'dead', reason: `crashed: ${err instanceof Error ? err.message : String(err)}` })
    }
    return true
  })
}

/** Teammates inside the leader's process, each in its own AsyncLocalStorage context. */
export const inProcessBackend: InProcessBackend = {
  type: 'in-process',
  kind: 'in-process',
  label: 'in-process',
  create: (opts) => new InProcessTeammates(opts),
}
