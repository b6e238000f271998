import { randomBytes } from 'node:crypto'
import { onAbort } from '../../util/abort.js'
import { addUsage, emptyUsage, type Usage } from '../pricing.js'
import type { DelegationLimits } from './limits.js'
import { formatTaskNotification, summaryFor, type TaskStatus } from './notification.js'

/**
 * The subagents of one session (a leader, a batch run) and their lifecycle: each is admitted
 * against the depth limit and the session quota, runs with its own AbortController, and ends
 * exactly once — completed, failed or stopped. A background one (started so, or moved there
 * after the auto-background limit) is reported through `notify` exactly once: a TaskStop that
 * lands first wins, and the natural end that follows is dropped.
 */

/** What a subagent's run reports as it goes (a stopped one is reported with what it had spent). */
export interface RunTracker {
  usage: Usage
  toolUses: number
  addUsage(u: Usage): void
}

export interface SubagentOutcome {
  status: TaskStatus
  text: string
  error?: string
  /** Extra elements of the notification (a worker's file check, a verdict). */
  extra?: Record<string, string>
}

export interface StartSpec {
  description: string
  /** The depth of the new subagent (the lead's subagents are at 1). */
  depth: number
  background: boolean
  /** Runs the subagent; must honour the signal. A throw is a failure. */
  run(signal: AbortSignal, tracker: RunTracker): Promise<SubagentOutcome>
}

export interface TaskEntry {
  id: string
  description: string
  depth: number
  startedAt: number
  state: 'running' | TaskStatus
  background: boolean
  tracker: RunTracker
  done: Promise<SubagentOutcome>
  abort: AbortController
  /** The notification was sent (or the result was handed over in the foreground). */
  settled: boolean
}

/** A spawn the limits refuse; the message is meant for the model and says what to do instead. */
export class DelegationRefused extends Error {
  override name = 'DelegationRefused'
}

export type Foreground = { kind: 'done'; outcome: SubagentOutcome; entry: TaskEntry } | { kind: 'backgrounded'; entry: TaskEntry }

export class SubagentTasks {
  private readonly tasks = new Map<string, TaskEntry>()
  private started = 0

  constructor(
    readonly limits: DelegationLimits,
    private readonly notify: (text: string, entry: TaskEntry) => void,
  ) {}

  /** Throws DelegationRefused when a subagent at `depth` may not start now. */
  admit(depth: number): void {
    if (depth > this.limits.maxDepth) {
      throw new DelegationRefused(
        `Not started: subagents nest at most ${this.limits.maxDepth} deep (SWARM_MAX_SUBAGENT_SPAWN_DEPTH) and this one would be at depth ${depth}. Do this part yourself and report it in your own answer.`,
      )
    }
    if (this.started >= this.limits.maxPerSession) {
      throw new DelegationRefused(
        `Not started: this session has started ${this.started} subagents, its quota (SWARM_MAX_SUBAGENTS_PER_SESSION=${this.limits.maxPerSession}). Finish with the results you have, or do the work yourself.`,
      )
    }
  }

  start(spec: StartSpec): TaskEntry {
    this.admit(spec.depth)
    this.started++
    const abort = new AbortController()
    const tracker: RunTracker = {
      usage: emptyUsage(),
      toolUses: 0,
      addUsage(u) {
        this.usage = addUsage(this.usage, u)
      },
    }
    const entry: TaskEntry = {
      id: `a${randomBytes(8).toString('hex')}`,
      description: spec.description,
      depth: spec.depth,
      startedAt: Date.now(),
      state: 'running',
      background: spec.background,
      tracker,
      abort,
      settled: false,
      done: undefined as unknown as Promise<SubagentOutcome>,
    }
    entry.done = spec
      .run(abort.signal, tracker)
      .catch(
        (err: unknown): SubagentOutcome =>
          abort.signal.aborted ? { status: 'stopped', text: '' } : { status: 'failed', text: '', error: (err as Error)?.message ?? String(err) },
      )
      .then((outcome) => {
        const final = abort.signal.aborted && entry.state === 'stopped' ? { ...outcome, status: 'stopped' as const } : outcome
        if (entry.state === 'running') entry.state = final.status
        if (entry.background) this.deliver(entry, final)
        return final
      })
    this.tasks.set(entry.id, entry)
    return entry
  }

  /**
   * Waits for a foreground subagent up to the auto-background limit; past it the subagent is
   * moved to the background (its end will be notified). An abort of the parent's call stops it.
   */
  async foreground(entry: TaskEntry, signal: AbortSignal, limitMs = this.limits.autoBackgroundMs): Promise<Foreground> {
    let timer: NodeJS.Timeout | undefined
    // A parent call aborted before this wait began stops the subagent too.
    const removeAbort = onAbort(signal, () => void this.stop(entry.id))
    try {
      const timeout =
        limitMs > 0
          ? new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), limitMs)))
          : new Promise<never>(() => undefined)
      const first = await Promise.race([entry.done, timeout])
      if (first === 'timeout' && entry.state === 'running') {
        entry.background = true
        return { kind: 'backgrounded', entry }
      }
      const outcome = await entry.done
      entry.settled = true
      return { kind: 'done', outcome, entry }
    } finally {
      clearTimeout(timer)
      removeAbort()
    }
  }

  /** Stops a running subagent; a background one is notified as stopped at once. Undefined: no such task. */
  stop(id: string): TaskEntry | undefined {
    const entry = this.tasks.get(id)
    if (!entry) return undefined
    if (entry.state !== 'running') return entry
    entry.state = 'stopped'
    entry.abort.abort()
    if (entry.background) this.deliver(entry, { status: 'stopped', text: '' })
    return entry
  }

  get(id: string): TaskEntry | undefined {
    return this.tasks.get(id)
  }

  running(): TaskEntry[] {
    return [...this.tasks.values()].filter((t) => t.state === 'running')
  }

  /** Stops everything still running (the session ends) and waits for the runs to unwind. */
  async stopAll(): Promise<void> {
    const running = this.running()
    for (const t of running) {
      t.settled = true // nobody is left to notify
      t.state = 'stopped'
      t.abort.abort()
    }
    await Promise.allSettled(running.map((t) => t.done))
  }

  private deliver(entry: TaskEntry, outcome: SubagentOutcome): void {
    if (entry.settled) return
    entry.settled = true
    const u = entry.tracker.usage
    const text = formatTaskNotification({
      taskId: entry.id,
      status: outcome.status,
      summary: summaryFor(entry.description, outcome.status, outcome.error),
      result: outcome.text,
      usage: {
        totalTokens: u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens,
        toolUses: entry.tracker.toolUses,
        durationMs: Date.now() - entry.startedAt,
      },
      ...(outcome.extra ? { extra: outcome.extra } : {}),
    })
    this.notify(text, entry)
  }
}
