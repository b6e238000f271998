import { addMemberSpend, type MemberSpend, type MemberState, type MemberStatePatch, updateMemberState } from '../store/member-state.js'
import type { Env } from '../home/env.js'

export interface AgentStateOptions {
  team: string
  name: string
  env?: Env
  initial: MemberState
  /** The first write drops what an earlier run left (an agent's start); without it, it merges into it (the leader's `team-lead`). */
  fresh: boolean
}

/**
 * A swarm agent's view of its own `state.json`: an in-memory copy it reads back (mode, usage,
 * turns), and updates queued in order through the one writer (`store/member-state.ts`), which
 * merges them into what other processes wrote. The first write starts the record afresh; later
 * ones never bring back a directory deleted meanwhile (the team or the member removed).
 */
export class AgentStateFile {
  private state: MemberState
  private writing: Promise<void> = Promise.resolve()
  private started = false

  constructor(private readonly options: AgentStateOptions) {
    this.state = options.initial
  }

  get current(): MemberState {
    return this.state
  }

  /** Merges `patch` (a field given as `undefined` is removed) and queues its write; writes land in call order. */
  update(patch: MemberStatePatch): Promise<void> {
    const next: Record<string, unknown> = { ...this.state, ...patch }
    for (const [k, v] of Object.entries(next)) if (v === undefined) delete next[k]
    this.state = next as MemberState
    const write = this.started ? patch : this.state
    const options = this.started ? {} : { create: true, replace: this.options.fresh }
    this.started = true
    this.writing = this.writing.then(async () => {
      await updateMemberState(this.options.team, this.options.name, write, this.options.env, options)
    })
    return this.writing
  }

  /**
   * Adds one request's spend (and `patch`) to the copy and queues it as an addition on disk
   * (`addMemberSpend`), so what another process adds for this member (a batch run) is kept.
   */
  addSpend(spend: MemberSpend, patch: MemberStatePatch = {}): Promise<void> {
    const cur = this.state
    const u = cur.usage
    const usage = {
      inputTokens: (u?.inputTokens ?? 0) + spend.usage.inputTokens,
      outputTokens: (u?.outputTokens ?? 0) + spend.usage.outputTokens,
      cacheReadTokens: (u?.cacheReadTokens ?? 0) + spend.usage.cacheReadTokens,
      cacheWriteTokens: (u?.cacheWriteTokens ?? 0) + spend.usage.cacheWriteTokens,
      ...(u?.cacheWrite1hTokens || spend.usage.cacheWrite1hTokens
        ? { cacheWrite1hTokens: (u?.cacheWrite1hTokens ?? 0) + (spend.usage.cacheWrite1hTokens ?? 0) }
        : {}),
    }
    const costUsd = Math.round(((cur.costUsd ?? 0) + spend.costUsd) * 1_000_000) / 1_000_000
    // Before the first write the whole record goes out, spend included.
    if (!this.started) return this.update({ ...patch, usage, costUsd })
    this.state = { ...cur, ...patch, usage, costUsd } as MemberState
    this.writing = this.writing.then(async () => {
      await addMemberSpend(this.options.team, this.options.name, spend, { ...(this.options.env ? { env: this.options.env } : {}), patch })
    })
    return this.writing
  }

  /** Resolves once every queued write is on disk (a budget check reads what was spent). */
  flushed(): Promise<void> {
    return this.writing
  }
}
