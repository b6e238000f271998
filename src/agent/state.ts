import { addMemberSpend, type MemberSpend, type MemberState, type MemberStatePatch, updateMemberState } from '../store/member-state.js'
import type { Env } from '../home/env.js'
import { afterTurnStarts, TURN_END_WAIT_MAX_MS } from './turn-starts.js'

export interface AgentStateOptions {
  team: string
  name: string
  env?: Env
  initial: MemberState
  /** The first write drops what an earlier run left (an agent's start); without it, it merges into it (the leader's `team-lead`). */
  fresh: boolean
}

/**
 * How long one request's spend may wait on disk for the turn's next status write: a turn's last
 * request is followed within milliseconds by its `idle`, and the two went as two locked
 * read-merge-renames of state.json, each ~3.6 ms of CPU (bench:scale, issue 25: a broadcast's
 * recipients all write at once). A budget check flushes it at once (`flushed`).
 */
const SPEND_WRITE_DELAY_MS = 250

/**
 * How long a turn's `working` may wait on disk for the turn's next status write (`update` with
 * `soon`): a turn that ends sooner writes state.json once — working, its spend and idle merged —
 * instead of twice. A broadcast's recipients all start a turn at once, and their 64 locked
 * read-merge-renames of state.json ran between the other recipients' deliveries and requests: a
 * fifth to a quarter of a hosted leader's busy time from `send '*'` to the 64th request (bench:scale
 * tmux@64 with 4 burners, issue 25). A longer turn shows `working` this much later.
 */
export const STATUS_WRITE_DELAY_MS = 250

/** A write queued behind the one in flight: what later calls add is merged into it until it starts. */
interface QueuedWrite {
  patch: MemberStatePatch
  spend: MemberSpend | undefined
  /** Resolves once this write (and every one before it) is on disk. */
  done: Promise<void>
  /** Lets the write start once the one before it is done (a spend alone waits SPEND_WRITE_DELAY_MS, a `soon` update STATUS_WRITE_DELAY_MS). */
  release(): void
  timer: NodeJS.Timeout | undefined
  /** When `timer` releases it (Date.now() ms). */
  due: number
  released: boolean
}

/** Makes sure the write is released within `ms` from now. */
function releaseWithin(q: QueuedWrite, ms: number): void {
  if (q.released || (q.timer !== undefined && q.due - Date.now() <= ms)) return
  clearTimeout(q.timer)
  q.due = Date.now() + ms
  q.timer = setTimeout(q.release, ms)
}

/**
 * A swarm agent's view of its own `state.json`: an in-memory copy it reads back (mode, usage,
 * turns), and updates queued in order through the one writer (`store/member-state.ts`), which
 * merges them into what other processes wrote. The first write starts the record afresh; later
 * ones never bring back a directory deleted meanwhile (the team or the member removed). Updates
 * made while a write is in flight go together as the next write (the last value of a field wins,
 * spends add up); a spend alone waits up to SPEND_WRITE_DELAY_MS for the status write after it,
 * a turn's `working` STATUS_WRITE_DELAY_MS, both counted from when no turn of the process is on its
 * way to its request (turn-starts.ts; TURN_END_WAIT_MAX_MS at most).
 */
export class AgentStateFile {
  private state: MemberState
  private writing: Promise<void> = Promise.resolve()
  private queued: QueuedWrite | undefined
  private started = false

  constructor(private readonly options: AgentStateOptions) {
    this.state = options.initial
  }

  get current(): MemberState {
    return this.state
  }

  /**
   * Merges `patch` (a field given as `undefined` is removed) and queues its write; writes land in
   * call order. `soon`: the write waits for the next update until no turn of the process is on
   * its way to its request (turn-starts.ts), then STATUS_WRITE_DELAY_MS at most (a turn's
   * `working`, which its `idle` usually follows within milliseconds).
   */
  update(patch: MemberStatePatch, opts: { soon?: boolean } = {}): Promise<void> {
    const next: Record<string, unknown> = { ...this.state, ...patch }
    for (const [k, v] of Object.entries(next)) if (v === undefined) delete next[k]
    this.state = next as MemberState
    return this.enqueue(patch, undefined, opts.soon ? STATUS_WRITE_DELAY_MS : 0)
  }

  /**
   * Adds one request's spend (and `patch`) to the copy and queues it as an addition on disk
   * (`addMemberSpend`), so what another process adds for this member (a batch run) is kept.
   */
  addSpend(spend: MemberSpend, patch: MemberStatePatch = {}): Promise<void> {
    const cur = this.state
    const costUsd = Math.round(((cur.costUsd ?? 0) + spend.costUsd) * 1_000_000) / 1_000_000
    this.state = { ...cur, ...patch, usage: addUsage(cur.usage, spend.usage), costUsd } as MemberState
    return this.enqueue(patch, spend, SPEND_WRITE_DELAY_MS)
  }

  /** Resolves once every queued write is on disk (a budget check reads what was spent). */
  flushed(): Promise<void> {
    this.queued?.release()
    return this.writing
  }

  /** Queues the patch into the next write, which starts at once (`delayMs` 0) or within `delayMs`, at the latest. */
  private enqueue(patch: MemberStatePatch, spend: MemberSpend | undefined, delayMs: number): Promise<void> {
    let q = this.queued
    if (!q) {
      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      const write: QueuedWrite = {
        patch: {},
        spend: undefined,
        done: Promise.resolve(),
        timer: undefined,
        due: 0,
        released: false,
        release: () => {
          clearTimeout(write.timer)
          write.released = true
          release()
        },
      }
      q = write
      this.queued = write
      this.writing = write.done = this.writing
        .then(() => released)
        .then(() => {
          if (this.queued === write) this.queued = undefined // from now on, updates go into the next write
          return this.write(write)
        })
    }
    Object.assign(q.patch, patch)
    if (spend) q.spend = q.spend ? { usage: addUsage(q.spend.usage, spend.usage), costUsd: q.spend.costUsd + spend.costUsd } : spend
    if (delayMs === 0) q.release()
    else {
      // Not among the other members' turn starts (turn-starts.ts): `delayMs` from when none is on its way.
      const write = q
      releaseWithin(write, TURN_END_WAIT_MAX_MS + delayMs)
      void afterTurnStarts().then(() => releaseWithin(write, delayMs))
    }
    return q.done
  }

  private async write(q: QueuedWrite): Promise<void> {
    const { team, name, env } = this.options
    if (!this.started) {
      // The first write: the whole record (spend included), afresh for a new run.
      this.started = true
      await updateMemberState(team, name, this.state, env, { create: true, replace: this.options.fresh })
    } else if (q.spend) {
      await addMemberSpend(team, name, q.spend, { ...(env ? { env } : {}), patch: q.patch })
    } else {
      await updateMemberState(team, name, q.patch, env, {})
    }
  }
}

function addUsage(a: MemberSpend['usage'] | undefined, b: MemberSpend['usage']): MemberSpend['usage'] {
  return {
    inputTokens: (a?.inputTokens ?? 0) + b.inputTokens,
    outputTokens: (a?.outputTokens ?? 0) + b.outputTokens,
    cacheReadTokens: (a?.cacheReadTokens ?? 0) + b.cacheReadTokens,
    cacheWriteTokens: (a?.cacheWriteTokens ?? 0) + b.cacheWriteTokens,
    ...(a?.cacheWrite1hTokens || b.cacheWrite1hTokens ? { cacheWrite1hTokens: (a?.cacheWrite1hTokens ?? 0) + (b.cacheWrite1hTokens ?? 0) } : {}),
  }
}
