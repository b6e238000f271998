import { randomBytes } from 'node:crypto'
import type Anthropic from '@anthropic-ai/sdk'
import { errorMessage } from '../../errors.js'
import { parseStructured } from '../../mailbox/messages.js'
import type { InboxMessage } from '../../mailbox/types.js'
import { describeContents } from '../../worktrees/inspect.js'
import { wantsWorktree } from '../definitions/isolation.js'
import { createWorktree, removeWorktree, worktreeCwd } from '../../worktrees/worktree.js'
import { parseVerdict } from '../definitions/built-in.js'
import type { AgentOutput } from '../render.js'
import type { AnyTool, PermissionCheck, ToolContext, ToolResult } from '../tool.js'
import { checkDeclaredFiles, FileSetScheduler } from './file-sets.js'
import { buildForkMessages, isInForkChild } from './fork.js'
import { runForkSubagent } from './fork-run.js'
import { runFreshSubagent, type SubagentRun } from './fresh.js'
import type { DelegationLimits } from './limits.js'
import { DelegationRefused, SubagentTasks, type SubagentOutcome, type TaskEntry } from './task-registry.js'

/**
 * How an `Agent` call without a teammate name is run: a fork of the caller (forks enabled, no
 * subagent_type), or a fresh subagent of a type — in the background (asked, or always for a
 * coordinator) with its end delivered as a `<task-notification>`, or in the foreground, moved
 * to the background past the auto-background limit. Nested calls (from subagents) run in the
 * foreground: a subagent has no later turn to be notified in.
 */

export interface AgentCall {
  description: string
  prompt: string
  subagent_type?: string | undefined
  model?: string | undefined
  run_in_background?: boolean | undefined
  isolation?: 'worktree' | undefined
  /** The files an implementation worker will change (coordinator mode). */
  files?: string[] | undefined
}

export interface DelegationOptions {
  team: string
  /** The agent that delegates (team-lead). */
  parent: string
  cwd: string
  env: NodeJS.ProcessEnv
  client: Anthropic
  leaderModel?: string
  /** The parent's permission check, asked for every tool call of its subagents. */
  checkPermission: PermissionCheck
  limits: DelegationLimits
  /** Coordinator mode: every worker in the background, no forks, file sets scheduled. */
  coordinator?: boolean
  /** A paragraph for every worker's system prompt (the team's scratchpad). */
  workerNote?: string
  /** Hands a notification to the parent's next turn. */
  notify(text: string, entry: TaskEntry): void
  output?: AgentOutput
  /** Builds the Agent tool a nested subagent gets (the same tool, without teammates). */
  nestedAgentTool?(): AnyTool
}

export class Delegation {
  readonly tasks: SubagentTasks
  private readonly files: FileSetScheduler
  private seq = 0
  private readonly teammates = new Map<string, (o: SubagentOutcome) => void>()

  constructor(private readonly options: DelegationOptions) {
    this.tasks = new SubagentTasks(options.limits, options.notify)
    this.files = new FileSetScheduler(options.cwd)
  }

  get forkEnabled(): boolean {
    return this.options.limits.forkEnabled && !this.options.coordinator
  }

  /** The Agent tool's answer for a call without `name`. */
  async run(call: AgentCall, ctx: ToolContext): Promise<ToolResult> {
    const depth = (ctx.depth ?? 0) + 1
    const fork = call.subagent_type === undefined && this.forkEnabled
    try {
      if (fork && (ctx.forkChild || isInForkChild(ctx.request?.messages ?? []))) {
        throw new DelegationRefused('Not started: you are a fork, and a fork cannot fork. Do the work yourself and put the result in your report.')
      }
      this.tasks.admit(depth)
    } catch (err) {
      if (err instanceof DelegationRefused) return { content: err.message, isError: true }
      throw err
    }
    const n = ++this.seq
    if (fork) return this.startFork(call, ctx, depth, n)
    const type = call.subagent_type ?? 'general-purpose'
    const nested = depth > 1
    const background = !nested && (call.run_in_background === true || this.options.coordinator === true)
    const worktree = call.isolation === 'worktree' || (await wantsWorktree({ agentType: type, cwd: this.options.cwd, env: this.options.env }))
    const entry = this.tasks.start({
      description: call.description,
      depth,
      background,
      run: (signal, tracker) =>
        this.withFiles(call.files, signal, async () => {
          const runOnce = (cwd: string): Promise<SubagentRun> =>
            runFreshSubagent({
              team: this.options.team,
              parent: this.options.parent,
              cwd,
              env: this.options.env,
              client: this.options.client,
              prompt: call.prompt,
              agentType: type,
              ...(call.model ? { model: call.model } : {}),
              ...(this.options.leaderModel ? { leaderModel: this.options.leaderModel } : {}),
              checkPermission: this.options.checkPermission,
              // The caller's own sandbox (the lead's, or a nesting subagent's = the lead's).
              sandbox: ctx.sandbox,
              // Its requests are the caller's spend (the lead's, or a nesting subagent's = the lead's).
              meter: ctx.meter,
              signal,
              depth,
              label: `${this.options.parent}/${type}-${n}`,
              tracker,
              ...(this.options.output ? { output: this.options.output } : {}),
              ...(this.options.nestedAgentTool ? { agentTool: this.options.nestedAgentTool() } : {}),
              ...(this.options.workerNote ? { promptNote: this.options.workerNote } : {}),
            })
          const run = worktree ? await this.inWorktree(runOnce) : await runOnce(this.options.cwd)
          return this.outcome(run, type, call.files)
        }),
    })
    if (background) return { content: startedText(entry, 'subagent') }
    const fg = await this.tasks.foreground(entry, ctx.signal, nested ? 0 : undefined)
    if (fg.kind === 'backgrounded') {
      return {
        content:
          `The subagent "${call.description}" was still running after ${duration(this.options.limits.autoBackgroundMs)}, so it was moved to the background: task id ${entry.id}. ` +
          `Its result will arrive as a <task-notification> at the start of a later turn. TaskStop {"task_id":"${entry.id}"} stops it.`,
      }
    }
    const { outcome } = fg
    const extra = Object.entries(outcome.extra ?? {})
      .map(([k, v]) => `\n[${k}] ${v}`)
      .join('')
    if (outcome.status === 'failed') return { content: `The subagent failed: ${outcome.error ?? 'unknown error'}`, isError: true }
    if (outcome.status === 'stopped') return { content: `The subagent was stopped.${outcome.text ? `\n${outcome.text}` : ''}`, isError: true }
    return { content: outcome.text + extra }
  }

  /**
   * A named agent asked to run in the background: a teammate (in a pane, or in-process), started
   * by `spawn`, whose task ends with its first idle notification (observe()); TaskStop stops it.
   */
  async startTeammate(
    name: string,
    description: string,
    spawn: () => Promise<string>,
    stopTeammate: (name: string) => Promise<string>,
  ): Promise<ToolResult> {
    try {
      this.tasks.admit(1)
    } catch (err) {
      if (err instanceof DelegationRefused) return { content: err.message, isError: true }
      throw err
    }
    const report = await spawn()
    const entry = this.tasks.start({
      description,
      depth: 1,
      background: true,
      run: (signal) =>
        new Promise<SubagentOutcome>((resolve) => {
          this.teammates.set(name, resolve)
          signal.addEventListener('abort', () => void stopTeammate(name).finally(() => resolve({ status: 'stopped', text: '' })), { once: true })
        }),
    })
    return { content: `${report}\n${startedText(entry, 'teammate')}` }
  }

  /** A message that reached the parent: a watched teammate's idle notification ends its task. */
  observe(entry: InboxMessage): void {
    const settle = this.teammates.get(entry.from)
    const note = settle ? parseStructured(entry.text) : undefined
    if (!settle || note?.type !== 'idle_notification') return
    this.teammates.delete(entry.from)
    const failed = note.idleReason === 'failed'
    settle(
      failed
        ? { status: 'failed', text: note.summary ?? '', error: note.failureReason ?? 'its turn failed' }
        : { status: 'completed', text: note.summary ?? '' },
    )
  }

  /** TaskStop of a subagent task: a line for the model, or undefined when `id` is not one of ours. */
  stop(id: string): string | undefined {
    const entry = this.tasks.stop(id)
    if (!entry) return undefined
    if (entry.state !== 'stopped') return `Task ${id} had already ${entry.state}; nothing to stop.`
    return `Stopped task ${id} ("${entry.description}").${entry.background ? ' Its notification follows.' : ''}`
  }

  close(): Promise<void> {
    return this.tasks.stopAll()
  }

  private startFork(call: AgentCall, ctx: ToolContext, depth: number, n: number): ToolResult {
    if (!ctx.request) return { content: 'Not started: this agent cannot fork here (no conversation to fork from).', isError: true }
    const request = ctx.request
    // Taken now: the parent's conversation moves on as soon as this call returns.
    const messages = buildForkMessages(request.messages, call.prompt)
    const entry = this.tasks.start({
      description: call.description,
      depth,
      background: true,
      run: async (signal, tracker) =>
        this.outcome(
          await runForkSubagent({
            team: this.options.team,
            parent: this.options.parent,
            cwd: this.options.cwd,
            env: this.options.env,
            client: this.options.client,
            request,
            messages,
            checkPermission: this.options.checkPermission,
            sandbox: ctx.sandbox,
            meter: ctx.meter,
            signal,
            depth,
            label: `${this.options.parent}/fork-${n}`,
            tracker,
            ...(this.options.output ? { output: this.options.output } : {}),
          }),
          'fork',
        ),
    })
    return { content: startedText(entry, 'fork') }
  }

  private async withFiles<T>(files: string[] | undefined, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    if (!files?.length) return work()
    const release = await this.files.acquire(files, signal)
    try {
      return await work()
    } finally {
      release()
    }
  }

  /** A subagent in a worktree of its own: removed when it holds nothing to lose, else kept and named. */
  private async inWorktree(runOnce: (cwd: string) => Promise<SubagentRun>): Promise<SubagentRun> {
    const env = this.options.env
    const wt = await createWorktree({ repoDir: this.options.cwd, team: this.options.team, name: `subagent-${randomBytes(3).toString('hex')}`, env })
    let run: SubagentRun | undefined
    let failure: unknown
    try {
      run = await runOnce(await worktreeCwd(wt))
    } catch (err) {
      failure = err
    }
    let where: string
    try {
      const r = await removeWorktree(wt, { env })
      where = r.removed
        ? 'it changed nothing; its worktree was removed'
        : `its work is kept in the worktree ${wt.path} (branch ${wt.branch}): ${describeContents(r.contents)}`
    } catch (err) {
      where = `its worktree ${wt.path} (branch ${wt.branch}) is kept: removing it failed (${errorMessage(err)})`
    }
    if (!run) throw new Error(`${errorMessage(failure)}\n[worktree] ${where}`)
    return { ...run, report: `${run.report}\n\n[worktree] ${where}` }
  }

  private outcome(run: SubagentRun, type: string, declared?: string[]): SubagentOutcome {
    const extra: Record<string, string> = {}
    if (declared?.length) extra['file-check'] = checkDeclaredFiles(this.options.cwd, declared, run.changedFiles).text
    if (type === 'Verification') extra.verdict = parseVerdict(run.report) ?? 'MISSING (the verifier ended without a VERDICT line)'
    const status = run.status === 'aborted' ? 'stopped' : 'completed'
    return { status, text: run.report, ...(Object.keys(extra).length ? { extra } : {}) }
  }
}

function startedText(entry: TaskEntry, what: 'fork' | 'subagent' | 'teammate'): string {
  return (
    `Started ${what} "${entry.description}" in the background: task id ${entry.id}. Its result will arrive as a <task-notification> at the start of a later turn; ` +
    `meanwhile do other work or end your turn. TaskStop {"task_id":"${entry.id}"} stops it.`
  )
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`
}
