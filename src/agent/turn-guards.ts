import type Anthropic from '@anthropic-ai/sdk'
import type { StructuredMessage } from '../mailbox/messages.js'
import type { AgentOutput } from './render.js'
import type { AgentStateFile } from './state.js'
import type { Transcript } from './transcript.js'
import type { CacheSetting, SystemPrompt } from './cache-layout.js'
import { DEFAULT_MAX_TOKENS } from './turn.js'
import { type BudgetLimit, budgetShare, describeSpend, raiseBudget, WARN_SHARE } from './budget.js'
import { Compactor, type CompactorOptions } from './compaction/compactor.js'
import type { PermissionCheck } from './tool.js'
import { readForModel } from './tools/model-reader.js'
import type { BashSandbox } from '../sandbox/types.js'
import type { Usage } from './pricing.js'
import type { TurnOptions } from './turn.js'
import { unmetered } from './spend-meter.js'

/**
 * What stands between a long-running agent and its next model request: compaction (automatic,
 * asked for, or after a prompt-too-long answer) and budgets (its own and the team's, checked by
 * the member's meter for every request it causes). They end a turn cleanly, never mid-request; `halted` (compaction gave up) and `exhausted` (budget) tell the
 * runtime how to go idle.
 */

type MessageParam = Anthropic.MessageParam

export interface Spend {
  costUsd: number
  usage: Usage
}

export interface GuardOptions extends CompactorOptions {
  budget: BudgetLimit
  spent(): Spend
  /** The team's limit and what all its members spent (read before each request when set). */
  teamBudget?(): Promise<{ limit: BudgetLimit; spent: Spend } | undefined>
  /** Tells team-lead something (the 80 % warning). */
  tellLead(text: string, summary: string): Promise<void>
}

export class TurnGuards {
  readonly compactor: Compactor
  private budget: BudgetLimit
  private warnedAt: BudgetLimit | undefined
  private pending: { focus?: string } | undefined
  /** Why the budget stopped the last turn (the agent waits for the lead). */
  exhausted: string | undefined

  constructor(private readonly options: GuardOptions) {
    this.compactor = new Compactor(options)
    this.budget = options.budget
  }

  /** Why compaction gave up (the agent stops), after MAX_CONSECUTIVE_FAILURES failures in a row. */
  get halted(): string | undefined {
    return this.compactor.exhausted ? this.compactor.reason : undefined
  }

  get limit(): BudgetLimit {
    return this.budget
  }

  /** The turn-loop hooks. */
  hooks(): Pick<TurnOptions, 'beforeRequest' | 'onPromptTooLong'> {
    return {
      beforeRequest: (messages, tools) => this.beforeRequest(messages, tools),
      onPromptTooLong: (messages, tools, err) => {
        const maximum = tooLongMaximum(err.message)
        if (maximum !== undefined) this.compactor.learnWindow(maximum)
        return this.compactor.policy.auto ? this.compactor.compact(messages, tools, 'prompt_too_long', undefined, maximum) : Promise.resolve(false)
      },
    }
  }

  /** A compaction asked for (`/compact`, `swarm compact`): done before the next request, or by compactNow(). */
  requestCompaction(focus?: string): void {
    this.pending = focus ? { focus } : {}
  }

  get compactionPending(): boolean {
    return this.pending !== undefined
  }

  /** Runs the asked-for compaction between turns. */
  async compactNow(messages: MessageParam[], tools: Anthropic.Tool[]): Promise<boolean> {
    const asked = this.pending
    this.pending = undefined
    if (!asked || messages.length === 0) return false
    return this.compactor.compact(messages, tools, 'manual', asked.focus)
  }

  /** Raises the agent's own budget (signed budget_update from team-lead) and lets it work again. */
  raise(add: { usd?: number; tokens?: number }): BudgetLimit {
    this.budget = raiseBudget(this.budget, add)
    this.exhausted = undefined
    return this.budget
  }

  /**
   * Verified control messages of the guards: compact_request (compact before the next request)
   * and budget_update (the agent's own limit raised, or the team's: check again). `wake` resumes the loop.
   */
  async handleControl(msg: StructuredMessage, host: { state: AgentStateFile; output: AgentOutput }, wake: () => void): Promise<void> {
    if (msg.type === 'compact_request') this.requestCompaction(msg.focus)
    else if (msg.type === 'budget_update') {
      if (msg.scope === 'team') this.exhausted = undefined
      else this.raise({ ...(msg.addUsd !== undefined ? { usd: msg.addUsd } : {}), ...(msg.addTokens !== undefined ? { tokens: msg.addTokens } : {}) })
      await host.state.update({ budget: this.budget })
      host.output.info(`budget raised by team-lead: now ${describeSpend(this.budget, this.options.spent())}`)
    } else return
    wake()
  }

  private async beforeRequest(messages: MessageParam[], tools: Anthropic.Tool[]): Promise<{ stop: string } | undefined> {
    if (this.pending) await this.compactNow(messages, tools)
    else await this.compactor.beforeRequest(messages, tools)
    if (this.halted) return { stop: this.halted }
    return undefined
  }

  /**
   * The member's meter check (before every request it causes, its subagents' too): the reason to
   * stop, if a budget is spent — the runtime then waits for the lead; tells the lead once at 80 %.
   */
  async checkSpend(): Promise<string | undefined> {
    const over = await this.checkBudget()
    if (over) this.exhausted = over
    return over
  }

  private async checkBudget(): Promise<string | undefined> {
    const own = { limit: this.budget, spent: this.options.spent(), whose: 'its budget' }
    const team = await this.options.teamBudget?.()
    for (const b of [own, ...(team ? [{ ...team, whose: "the team's budget" }] : [])]) {
      const share = budgetShare(b.limit, b.spent)
      if (share >= 1) return `budget_exhausted: ${this.options.name} spent ${describeSpend(b.limit, b.spent)} (${b.whose})`
      if (share >= WARN_SHARE && b === own && this.warnedAt !== this.budget) {
        this.warnedAt = this.budget
        await this.options.tellLead(
          `${this.options.name} has used ${Math.floor(share * 100)}% of its budget: ${describeSpend(b.limit, b.spent)}. Raise it with \`swarm budget ${this.options.team} ${this.options.name} --add USD\`.`,
          'budget 80% used',
        )
      }
    }
    return undefined
  }
}

/** The agent's side of the guards: what the runtime was built with. */
export interface GuardHost {
  client: Anthropic
  model: string
  system: SystemPrompt | string
  cache?: CacheSetting
  env: NodeJS.ProcessEnv
  cwd: string
  team: string
  name: string
  transcript: Transcript
  output: AgentOutput
  budget?: BudgetLimit
  teamBudget?: GuardOptions['teamBudget']
  /** What a restored file is read through (the agent's own permission check and sandbox). */
  checkPermission: PermissionCheck
  sandbox: BashSandbox
  /** The member's state: where a window a 400 named is kept for the model (`contextWindows`). */
  state?: AgentStateFile
}

export function createTurnGuards(host: GuardHost, live: Pick<GuardOptions, 'signal' | 'spent' | 'onUsage' | 'tellLead'>): TurnGuards {
  return new TurnGuards({
    ...live,
    client: host.client,
    model: host.model,
    system: host.system,
    cache: host.cache ?? { enabled: true, ttl: '5m' },
    maxTokens: DEFAULT_MAX_TOKENS,
    env: host.env,
    cwd: host.cwd,
    team: host.team,
    name: host.name,
    readFile: (file) =>
      readForModel(file, {
        cwd: host.cwd,
        signal: live.signal ?? new AbortController().signal,
        agentName: host.name,
        teamName: host.team,
        env: host.env,
        checkPermission: host.checkPermission,
        sandbox: host.sandbox,
        // A file read for the model, not a model request.
        meter: unmetered('a compaction restore reads files; its summary request is recorded through onUsage'),
      }),
    record: (...events) => host.transcript.append(...events),
    info: (line) => host.output.info(line),
    warn: (line) => host.output.warn(line),
    budget: host.budget ?? {},
    ...(host.teamBudget ? { teamBudget: host.teamBudget } : {}),
    ...learnedWindows(host),
  })
}

/** The window kept for the host's model, and how a newly learned one is kept (through the one state writer). */
function learnedWindows(host: GuardHost): Pick<GuardOptions, 'learnedWindow' | 'onWindowLearned'> {
  const state = host.state
  if (!state) return {}
  const learned = state.current.contextWindows?.[host.model]
  return {
    ...(learned !== undefined ? { learnedWindow: learned } : {}),
    onWindowLearned: (window) => {
      state
        .update({ contextWindows: { ...state.current.contextWindows, [host.model]: window } })
        .catch((err: unknown) => host.output.warn(`could not keep the learned window in state.json: ${(err as Error).message}`))
    },
  }
}

/** M of the API's "prompt is too long: N tokens > M maximum". */
function tooLongMaximum(message: string): number | undefined {
  const m = /prompt is too long: \d+ tokens > (\d+) maximum/.exec(message)
  return m ? Number(m[1]) : undefined
}
