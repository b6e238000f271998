import fs from 'node:fs'
import { randomUUID } from 'node:crypto'
import type Anthropic from '@anthropic-ai/sdk'
import { APIError } from '@anthropic-ai/sdk'
import { markRead } from '../mailbox/inbox.js'
import { encodeStructured, parseStructured, PRIVILEGED_TYPES, type StructuredMessage } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { watchInbox, type InboxWatcher } from '../mailbox/watch.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { claimTask, listTasks } from '../tasks/task-store.js'
import { inboxPath, LEAD_NAME, tasksDir } from '../home/paths.js'
import { ensureDir } from '../util/fs.js'
import type { CacheSetting, SystemPrompt } from './cache-layout.js'
import { addUsage, emptyUsage, estimateCost, type Usage } from './pricing.js'
import { formatTeammateMessage } from './prompt.js'
import type { AgentOutput } from './render.js'
import type { AgentStateFile, AgentStatus } from './state.js'
import type { AnyTool as Tool, PermissionCheck } from './tool.js'
import type { Transcript } from './transcript.js'
import { runTurn, type TurnResult } from './turn.js'
import { describeFailure, idleNotification, type LastTurn } from './turn-report.js'

export { describeFailure } from './turn-report.js'

type MessageParam = Anthropic.MessageParam

/** How a message that claims to come from the lead checks out. */
export type LeadVerdict = 'verified' | 'unverified' | 'not-lead'

/** What a turn did that the runtime needs to know (filled in by the team tools). */
export interface TurnLog {
  completedTaskIds: string[]
  shutdownResponses: Map<string, { approve: boolean; reason?: string }>
}

export interface RuntimeOptions {
  team: string
  name: string
  cwd: string
  env: NodeJS.ProcessEnv
  client: Anthropic
  model: string
  mode?: string
  system: SystemPrompt | string
  /** Prompt caching of this agent's requests (settings `promptCacheTtl`; default on, 5 m). */
  cache?: CacheSetting
  tools: Tool[]
  /** The tools for a permission mode (the mode can change while the agent runs); default `tools`. */
  toolsForMode?(mode: string): Tool[]
  /** Model calls per turn before the turn is cut short as partial (the definition's maxTurns). */
  maxIterations: number
  output: AgentOutput
  transcript: Transcript
  state: AgentStateFile
  /** The conversation so far (rebuilt from the transcript with --resume). */
  messages: MessageParam[]
  turnLog: TurnLog
  verifyLead(entry: InboxMessage): LeadVerdict
  checkPermission: PermissionCheck
  /** Called for privileged control messages that verified (permission answers, mode changes…). */
  onControl?(message: StructuredMessage, entry: InboxMessage): void | Promise<void>
  /** Claim the next unowned, unblocked task when idle with an empty inbox. */
  autoClaimTasks?: boolean
  /** Stops the agent from outside (SIGTERM, the in-process backend's kill). */
  signal?: AbortSignal
  /**
   * The lead's console owns the team-lead inbox and hands messages in with `deliver()`; the
   * runtime then does not watch the inbox itself.
   */
  external?: boolean
  /** Decides, before the default handling, what happens to a new message (the lead routes requests to its console). */
  route?(entry: InboxMessage, structured: StructuredMessage | undefined): 'default' | 'consume' | 'queue'
  color?: string
  /** Runs when the loop ends (the permission layer cancels what it still waits for). */
  onExit?(): void | Promise<void>
  /** Write and Edit may write only inside these (Verification's scratch directory). */
  writableRoots?: string[]
}

/**
 * The teammate's life on its inbox: wait (event-driven) → take every unread message into one user
 * turn → run the model with tools → mark them read → go idle with ONE idle_notification → maybe
 * claim a task. Control messages (shutdown, permission answers, mode changes) are handled by the
 * runtime itself, and only when they verifiably come from team-lead.
 */
export class TeammateRuntime {
  private queue: InboxMessage[] = []
  private seen = new Set<string>()
  private wake: (() => void) | undefined
  private watcher: InboxWatcher | undefined
  private status: AgentStatus = 'starting'
  private pendingShutdown: (StructuredMessage & { type: 'shutdown_request' }) | undefined
  private stopRequested = false
  private usage: Usage = emptyUsage()
  private readonly turnAbort = new AbortController()
  private exitCode = 0

  constructor(private readonly o: RuntimeOptions) {
    // A resumed agent's state file starts from what it had spent before.
    this.usage = o.state.current.usage ?? emptyUsage()
    o.signal?.addEventListener('abort', () => this.stop(), { once: true })
  }

  /** Runs until shutdown is approved or the signal aborts; resolves with the exit code. */
  async run(): Promise<number> {
    let taskWatch: fs.FSWatcher | undefined
    try {
      if (!this.o.external) {
        // `ready` hands over what is already unread (sent while we were dead) before anything new;
        // each batch is recorded as delivered once it is in our queue.
        this.watcher = watchInbox(this.o.team, this.o.name, (msgs) => this.enqueue(msgs), {
          env: this.o.env,
          signal: this.turnAbort.signal,
          markDelivered: true,
        })
        await this.watcher.ready
      }
      if (this.o.autoClaimTasks !== false) {
        // A task created or unblocked while we sleep wakes us to claim it (no polling).
        const dir = tasksDir(this.o.team, this.o.env)
        await ensureDir(dir)
        taskWatch = fs.watch(dir, () => this.wake?.())
        taskWatch.on('error', () => undefined) // the team was deleted; messages still wake us
      }
      while (!this.stopRequested) {
        if (this.queue.length === 0) {
          if (this.pendingShutdown) {
            await this.approveShutdown(this.pendingShutdown)
            break
          }
          if (this.status !== 'idle' && this.status !== 'starting') await this.goIdle(undefined)
          if (this.status === 'starting') await this.setStatus('idle')
          if (await this.maybeClaimTask()) continue
          await this.sleepUntilWoken()
          continue
        }
        const batch = this.queue.splice(0)
        await this.runUserTurn(batch)
      }
    } finally {
      taskWatch?.close()
      await this.o.onExit?.()
      await this.watcher?.close()
      await this.setStatus('exited')
      this.o.output.flush()
    }
    return this.exitCode
  }

  /** Hands messages in (external mode), or text typed by the user at the lead's console. */
  deliver(messages: InboxMessage[]): void {
    this.enqueue(messages)
  }

  /** Text typed by the human at the console: a user turn of its own. */
  say(text: string): void {
    this.enqueue([{ from: 'user', text, timestamp: new Date().toISOString(), msg_id: `user-${randomUUID()}`, local: true }])
  }

  /** A `<task-notification>` (or other event for the model): a user turn of its own, taken at the start of the next turn. */
  notify(text: string): void {
    this.enqueue([{ from: 'task-notification', text, timestamp: new Date().toISOString(), msg_id: `note-${randomUUID()}`, local: true }])
  }

  get currentStatus(): AgentStatus {
    return this.status
  }

  /** Aborts the current turn (stream and tools) and ends the loop. */
  stop(): void {
    this.stopRequested = true
    this.turnAbort.abort()
    this.wake?.()
  }

  private sleepUntilWoken(): Promise<void> {
    if (this.queue.length || this.stopRequested) return Promise.resolve()
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined
        resolve()
      }
    })
  }

  private key(m: InboxMessage): string {
    return m.msg_id ?? `${m.from}|${m.timestamp}|${m.text}`
  }

  /** Takes delivered messages: control messages are handled at once, the rest queue for a turn. */
  private enqueue(messages: InboxMessage[]): void {
    for (const m of messages) {
      const k = this.key(m)
      if (this.seen.has(k) || m.read) continue
      this.seen.add(k)
      const structured = parseStructured(m.text)
      const routed = this.o.route?.(m, structured) ?? 'default'
      if (routed === 'consume') {
        this.background(this.consume([m]))
        continue
      }
      if (routed === 'queue') {
        this.queue.push(m)
        continue
      }
      if (structured && PRIVILEGED_TYPES.has(structured.type)) {
        this.background(this.handleControl(m, structured))
        continue
      }
      this.queue.push(m)
    }
    if (this.queue.length) this.wake?.()
  }

  /** Work started from a watcher callback: its failure is reported in the pane, never unhandled. */
  private background(work: Promise<unknown>): void {
    work.catch((err: unknown) => this.o.output.warn(`inbox: ${(err as Error)?.message ?? String(err)}`))
  }

  private async handleControl(entry: InboxMessage, msg: StructuredMessage): Promise<void> {
    const verdict = entry.from === LEAD_NAME ? this.o.verifyLead(entry) : 'not-lead'
    await this.consume([entry])
    if (verdict !== 'verified') {
      this.o.output.warn(
        `ignored ${msg.type} from ${entry.from}: ${verdict === 'unverified' ? 'UNVERIFIED (no valid lead signature)' : 'only team-lead may send it'}`,
      )
      await this.o.transcript.append({ kind: 'state', state: this.status, detail: `ignored ${verdict} ${msg.type} from ${entry.from}` })
      return
    }
    if (msg.type === 'shutdown_request') {
      if (this.status === 'idle' || this.status === 'starting') {
        await this.approveShutdown(msg)
        this.stop()
      } else {
        this.pendingShutdown = msg
        this.o.output.info(`shutdown requested by team-lead${msg.reason ? ` (${msg.reason})` : ''}; finishing the current turn`)
      }
      return
    }
    if (msg.type === 'mode_set_request') {
      await this.o.state.update({ mode: msg.mode })
      this.o.output.info(`mode set to ${msg.mode} by team-lead`)
    }
    await this.o.onControl?.(msg, entry)
  }

  private async consume(all: InboxMessage[]): Promise<void> {
    const messages = all.filter((m) => !m.local)
    if (messages.length === 0) return
    const ids = messages.flatMap((m) => (m.msg_id ? [m.msg_id] : []))
    const legacy = messages.filter((m) => !m.msg_id)
    const file = inboxPath(this.o.team, this.o.name, this.o.env)
    if (ids.length) await markRead(file, { msgIds: ids })
    if (legacy.length) {
      const keys = new Set(legacy.map((m) => this.key(m)))
      await markRead(file, (m) => !m.msg_id && keys.has(this.key(m)))
    }
  }

  async setStatus(status: AgentStatus, detail?: string): Promise<void> {
    if (this.status === status && !detail) return
    this.status = status
    this.o.output.state(status, detail)
    await this.o.state.update({ status, detail, lastActivity: Date.now() })
    await this.o.transcript.append({ kind: 'state', state: status, ...(detail ? { detail } : {}) })
  }

  /** A pending shutdown is presented to the model, which may reject it with SendMessage. */
  private shutdownPrompt(req: StructuredMessage & { type: 'shutdown_request' }): string {
    return (
      `team-lead asks you to shut down${req.reason ? `: ${req.reason}` : ''}. ` +
      `If you must keep working, reject it with SendMessage to team-lead, message ` +
      `{"type":"shutdown_response","request_id":"${req.requestId}","approve":false,"reason":"<why>"}. ` +
      `Otherwise reply with one short sentence; you will be shut down.`
    )
  }

  private async runUserTurn(batch: InboxMessage[]): Promise<void> {
    const text = batch.map((m) => (m.local ? m.text : formatTeammateMessage(m))).join('\n\n')
    await this.runModelTurn(text, batch)
    if (this.pendingShutdown && this.queue.length === 0) {
      const req = this.pendingShutdown
      await this.runModelTurn(this.shutdownPrompt(req), [])
      const answer = this.o.turnLog.shutdownResponses.get(req.requestId)
      this.pendingShutdown = undefined
      if (answer && !answer.approve) {
        this.o.output.info(`shutdown rejected: ${answer.reason ?? '(no reason)'}`)
        return
      }
      await this.approveShutdown(req)
      this.stop()
    }
  }

  private appendUser(text: string): void {
    const last = this.o.messages[this.o.messages.length - 1]
    if (last?.role === 'user') {
      // After a partial or failed turn the conversation ends with a user message; merge, the API wants alternation.
      const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content
      last.content = [...content, { type: 'text', text }]
    } else {
      this.o.messages.push({ role: 'user', content: text })
    }
  }

  private async runModelTurn(text: string, batch: InboxMessage[], taskId?: string): Promise<TurnResult | undefined> {
    await this.setStatus('working', taskId ? `task #${taskId}` : undefined)
    this.appendUser(text)
    await this.o.transcript.append({ kind: 'message', message: this.o.messages[this.o.messages.length - 1] })
    let result: TurnResult | undefined
    let failure: string | undefined
    try {
      result = await runTurn({
        client: this.o.client,
        model: this.o.model,
        system: this.o.system,
        ...(this.o.cache ? { cache: this.o.cache } : {}),
        tools: this.o.toolsForMode?.(this.o.state.current.mode ?? this.o.mode ?? 'default') ?? this.o.tools,
        messages: this.o.messages,
        maxIterations: this.o.maxIterations,
        signal: this.turnAbort.signal,
        toolContext: {
          cwd: this.o.cwd,
          signal: this.turnAbort.signal,
          agentName: this.o.name,
          teamName: this.o.team,
          env: this.o.env,
          checkPermission: this.o.checkPermission,
          ...(this.o.writableRoots ? { writableRoots: this.o.writableRoots } : {}),
        },
        onText: (d) => this.o.output.text(d),
        onToolEnd: (name, input, res, ms) => this.o.output.tool(name, input, res, ms),
        onUsage: (u) => void this.addUsage(u),
        record: (...events) => this.o.transcript.append(...events),
      })
      this.o.output.flush()
    } catch (err) {
      this.o.output.flush()
      failure = describeFailure(err)
      this.o.output.warn(`turn failed: ${failure}`)
      await this.o.transcript.append({
        kind: 'error',
        errorType:
          err instanceof APIError ? ((err.error as { error?: { type?: string } })?.error?.type ?? err.name) : ((err as Error).name ?? 'Error'),
        status: err instanceof APIError ? err.status : undefined,
        requestId: err instanceof APIError ? (err.requestID ?? undefined) : undefined,
        message: (err as Error).message,
      })
    }
    // Read only once the turn consumed them (a crash before this point re-delivers them). An
    // aborted turn did not: like a crash, its messages stay unread for the next start (--resume
    // drops the cut-off turn from the conversation).
    if (result?.status !== 'aborted') await this.consume(batch)
    this.lastTurn = { result, failure, taskId }
    return result
  }

  private lastTurn: LastTurn | undefined

  private async addUsage(u: Usage): Promise<void> {
    this.usage = addUsage(this.usage, u)
    await this.o.state.update({ usage: this.usage, costUsd: estimateCost(this.o.model, this.usage), turns: (this.o.state.current.turns ?? 0) + 1 })
  }

  /** One idle_notification per transition to idle, with what the turn did. */
  private async goIdle(_: undefined): Promise<void> {
    const last = this.lastTurn
    this.lastTurn = undefined
    // Tasks completed since the last idle, also in turns that ran back to back (queued messages).
    const completedIds = this.o.turnLog.completedTaskIds.splice(0)
    await this.setStatus('idle')
    // The lead is the one idle notifications go to; it does not notify itself.
    if (!last || this.o.name === LEAD_NAME) return
    const note = idleNotification(this.o.name, last, completedIds[completedIds.length - 1])
    await this.sendToLead(encodeStructured(note), note.summary ? `idle: ${note.summary.slice(0, 60)}` : 'idle')
  }

  private async sendToLead(text: string, summary?: string): Promise<void> {
    await sendTeamMessage({ team: this.o.team, from: this.o.name, to: LEAD_NAME, text, ...(summary ? { summary } : {}), env: this.o.env })
  }

  private async approveShutdown(req: StructuredMessage & { type: 'shutdown_request' }): Promise<void> {
    const approved: StructuredMessage = {
      type: 'shutdown_approved',
      requestId: req.requestId,
      from: this.o.name,
      timestamp: new Date().toISOString(),
    }
    await this.sendToLead(encodeStructured(approved), 'shutdown approved')
    this.o.output.info('shutdown approved; exiting')
    this.pendingShutdown = undefined
  }

  /** After a turn, with nothing in the inbox: claim the next unowned, unblocked task. */
  private async maybeClaimTask(): Promise<boolean> {
    if (this.o.autoClaimTasks === false || this.stopRequested) return false
    const tasks = await listTasks(this.o.team, this.o.env).catch((err: Error) => {
      this.o.output.warn(`cannot read the task list: ${err.message}`)
      return []
    })
    const done = new Set(tasks.filter((t) => t.status === 'completed').map((t) => t.id))
    if (tasks.some((t) => t.owner === this.o.name && t.status === 'in_progress')) return false
    const next = tasks.find((t) => t.status === 'pending' && !t.owner && t.blockedBy.every((b) => done.has(b)))
    if (!next) return false
    const claim = await claimTask(this.o.team, next.id, this.o.name, { checkAgentBusy: true, env: this.o.env })
    if (!claim.ok) return false
    await this.o.state.update({ currentTask: next.id })
    const prompt =
      `You claimed task #${next.id}: ${next.subject}\n\n${next.description}\n\n` +
      `Do it, then mark it completed with TaskUpdate {"taskId":"${next.id}","status":"completed"} and report to team-lead with SendMessage.`
    await this.runModelTurn(prompt, [], next.id)
    await this.o.state.update({ currentTask: undefined })
    return true
  }
}
