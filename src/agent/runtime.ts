import { randomUUID } from 'node:crypto'
import { encodeStructured, parseStructured, PRIVILEGED_TYPES, type StructuredMessage } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { watchInbox, type InboxWatcher } from '../mailbox/watch.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { sendIdleNotification } from '../teams/idle-notification.js'
import { inboxPath, LEAD_NAME, tasksDir } from '../home/paths.js'
import { onAbort } from '../util/abort.js'
import { ensureDir } from '../util/fs.js'
import { type PathWatch, watchPath } from '../watch/path-watch.js'
import type { RuntimeOptions } from './runtime-options.js'
import { createTurnGuards, type TurnGuards } from './turn-guards.js'
import { addUsage, emptyUsage, estimateCost, type Usage } from './pricing.js'
import { claimNextTask } from './auto-claim.js'
import { formatTeammateMessage, shutdownPrompt } from './prompt.js'
import type { MemberStatus } from '../store/member-state.js'
import type { AnyTool as Tool } from './tool.js'
import { runTurn, type TurnResult } from './turn.js'
import type { SpendMeter } from './spend-meter.js'
import { describeFailure, errorEvent, idleReport, type LastTurn } from './turn-report.js'
import { appendUserText } from './conversation.js'
import { markConsumed, messageKey } from './inbox-consume.js'
import { warmModelTransport } from './client.js'
import { whenCpuSpare } from './spare-cpu.js'
import { afterTurnStarts, turnOnItsWay } from './turn-starts.js'

import { refusalReason } from '../trust/gate.js'

export { describeFailure } from './turn-report.js'
export type { RuntimeOptions, TurnLog } from './runtime-options.js'

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
  private status: MemberStatus = 'starting'
  private pendingShutdown: (StructuredMessage & { type: 'shutdown_request' }) | undefined
  private stopRequested = false
  private usage: Usage = emptyUsage()
  private costUsd = 0
  /** This member's account: its turns, its compactions, and its subagents', forks' and batch workers' requests. */
  readonly meter: SpendMeter = {
    check: () => this.guards.checkSpend(),
    record: (model, u) => void this.addSpend(model, u),
  }
  private readonly turnAbort = new AbortController()
  private exitCode = 0
  private wakeBudget: (() => void) | undefined
  /** Compaction and budgets, checked before every model request. */
  readonly guards: TurnGuards

  constructor(private readonly options: RuntimeOptions) {
    // A resumed agent's state file starts from what it had spent before.
    this.usage = options.state.current.usage ?? emptyUsage()
    this.costUsd = options.state.current.costUsd ?? 0
    this.guards = createTurnGuards(options, {
      signal: this.turnAbort.signal,
      spent: () => ({ costUsd: this.costUsd, usage: this.usage }),
      onUsage: (u) => this.meter.record(options.model, u),
      tellLead: (text, summary) => (options.name === LEAD_NAME ? Promise.resolve() : this.sendToLead(text, summary)),
    })
    // Also a signal that fired while the agent was being assembled: run() then ends at once.
    onAbort(options.signal, () => this.stop())
  }

  /** Runs until shutdown is approved or the signal aborts; resolves with the exit code. */
  async run(): Promise<number> {
    let taskWatch: PathWatch | undefined
    try {
      if (!this.options.external) {
        // `ready` hands over what is already unread (sent while we were dead) before anything new;
        // each batch is recorded as delivered once it is in our queue.
        this.watcher = watchInbox(this.options.team, this.options.name, (msgs) => this.enqueue(msgs), {
          env: this.options.env,
          signal: this.turnAbort.signal,
          markDelivered: true,
        })
        await this.watcher.ready
      }
      if (this.options.autoClaimTasks !== false) {
        // A task created or unblocked while we sleep wakes us to claim it (no polling).
        const dir = tasksDir(this.options.team, this.options.env)
        await ensureDir(dir)
        // No poll, and a watch that breaks (the team was deleted) is not reported: messages still wake us.
        taskWatch = watchPath(dir, () => this.wake?.())
      }
      while (!this.stopRequested) {
        if (this.guards.halted) {
          // Compaction gave up: say why in the idle notification, then stop — never a loop.
          if (this.status !== 'idle') await this.goIdle(undefined)
          this.exitCode = 1
          break
        }
        if (this.guards.exhausted && !this.pendingShutdown) {
          // Out of budget: idle (the notification says budget_exhausted) until team-lead raises it.
          if (this.status !== 'idle') await this.goIdle(undefined)
          await new Promise<void>((resolve) => (this.wakeBudget = resolve))
          continue
        }
        if (this.guards.compactionPending && this.queue.length === 0) {
          await this.compactBetweenTurns()
          continue
        }
        if (this.queue.length === 0) {
          if (this.pendingShutdown) {
            await this.approveShutdown(this.pendingShutdown)
            break
          }
          if (this.status !== 'idle' && this.status !== 'starting') await this.goIdle(undefined)
          if (this.status === 'starting') {
            await this.setStatus('idle')
            this.warmFirstTurn()
          }
          if (await this.maybeClaimTask()) continue
          await this.sleepUntilWoken()
          continue
        }
        const batch = this.queue.splice(0)
        await this.runUserTurn(batch)
      }
    } finally {
      taskWatch?.close()
      await this.options.onExit?.()
      await this.watcher?.close()
      await this.setStatus('exited')
      this.options.output.flush()
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

  get currentStatus(): MemberStatus {
    return this.status
  }

  /** Aborts the current turn (stream and tools) and ends the loop. */
  stop(): void {
    this.stopRequested = true
    this.turnAbort.abort()
    this.wake?.()
    this.wakeBudget?.()
  }

  /** Compacts the conversation before the next request (`/compact [focus]`, `swarm compact`). */
  compact(focus?: string): void {
    this.guards.requestCompaction(focus)
    this.wake?.()
  }

  private get currentTools(): Tool[] {
    return this.options.toolsForMode?.(this.options.state.current.mode ?? this.options.mode ?? 'default') ?? this.options.tools
  }

  /**
   * Does once the member is idle, a moment after it started, what its first turn would pay for
   * in a fresh process: converts the tools' zod schemas to the API's JSON schemas (memoized per
   * tool; ~40 ms of CPU) and warms the transport (client.ts warmModelTransport). Paid by the first
   * turn, it was paid by all 64 recipients of a broadcast at once (issue 25: the first broadcast
   * was 3–4× slower). Done when the machine has CPU to spare (spare-cpu.ts), so that it does not
   * compete with the teammates still starting; a message that comes first pays for it itself.
   */
  private warmFirstTurn(): void {
    whenCpuSpare(
      () => {
        for (const tool of this.currentTools) tool.toApiTool()
        warmModelTransport().catch((err: unknown) => {
          // Only a warm-up: the first request loads the same and meets any error itself.
          this.options.output.warn(`warm-up: ${(err as Error)?.message ?? String(err)}`)
        })
      },
      () => this.turnStarted || this.stopRequested, // the first turn paid for it, or none will come
    )
  }

  private async compactBetweenTurns(): Promise<void> {
    await this.setStatus('working', 'compacting')
    await this.guards.compactNow(
      this.options.messages,
      this.currentTools.map((t) => t.toApiTool()),
    )
    if (this.guards.halted) this.lastTurn = { failure: this.guards.halted }
    await this.setStatus('idle')
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

  /** Takes delivered messages: control messages are handled at once, the rest queue for a turn. */
  private enqueue(messages: InboxMessage[]): void {
    for (const m of messages) {
      const k = messageKey(m)
      if (this.seen.has(k) || m.read) continue
      this.seen.add(k)
      const structured = parseStructured(m.text)
      const routed = this.options.route?.(m, structured) ?? 'default'
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
    work.catch((err: unknown) => this.options.output.warn(`inbox: ${(err as Error)?.message ?? String(err)}`))
  }

  private async handleControl(entry: InboxMessage, msg: StructuredMessage): Promise<void> {
    const verdict = entry.from === LEAD_NAME ? await this.options.verifyLead(entry) : 'not-lead'
    await this.consume([entry])
    if (verdict !== 'verified') {
      this.options.output.warn(`ignored ${msg.type} from ${entry.from}: ${refusalReason(verdict)}`)
      await this.options.transcript.append({ kind: 'state', state: this.status, detail: `ignored ${verdict} ${msg.type} from ${entry.from}` })
      return
    }
    if (msg.type === 'shutdown_request') {
      if (this.status === 'idle' || this.status === 'starting') {
        await this.approveShutdown(msg)
        this.stop()
      } else {
        this.pendingShutdown = msg
        this.options.output.info(`shutdown requested by team-lead${msg.reason ? ` (${msg.reason})` : ''}; finishing the current turn`)
      }
      return
    }
    await this.guards.handleControl(msg, this.options, () => {
      this.wake?.()
      this.wakeBudget?.()
    })
    if (msg.type === 'mode_set_request') {
      await this.options.state.update({ mode: msg.mode })
      this.options.output.info(`mode set to ${msg.mode} by team-lead`)
    }
    if (msg.type === 'lead_key_update') this.options.output.info('team-lead handed out a new lead key; orders are verified with it from now on')
    await this.options.onControl?.(msg, entry)
  }

  private consume(all: InboxMessage[]): Promise<void> {
    return markConsumed(inboxPath(this.options.team, this.options.name, this.options.env), all)
  }

  async setStatus(status: MemberStatus, detail?: string): Promise<void> {
    await (await this.startStatus(status, detail)).written
  }

  /**
   * Records the status in the transcript and queues its state.json write (writes land in call
   * order); resolves, once the transcript has it, with the write. A turn does not wait for its `working` write before its
   * model request: the locked read-merge-rename of state.json, on every recipient of a
   * broadcast at once, delayed each request by 25–200 ms under load (issue 25). `soon` (a turn's
   * `working`): the write waits for the turn's next status, up to STATUS_WRITE_DELAY_MS (agent/state.ts).
   */
  private async startStatus(status: MemberStatus, detail?: string, soon = false): Promise<{ written: Promise<void> }> {
    // In an object: an async function that returned the write itself would wait for it.
    if (this.status === status && !detail) return { written: Promise.resolve() }
    this.status = status
    this.options.output.state(status, detail)
    const written = this.options.state.update({ status, detail, lastActivity: Date.now() }, { soon })
    written.catch(() => {}) // awaited by the caller; this only keeps it from counting as unhandled meanwhile
    await this.options.transcript.append({ kind: 'state', state: status, ...(detail ? { detail } : {}) })
    return { written }
  }

  private async runUserTurn(batch: InboxMessage[]): Promise<void> {
    const text = batch.map((m) => (m.local ? m.text : formatTeammateMessage(m))).join('\n\n')
    await this.runModelTurn(text, batch)
    if (this.pendingShutdown && this.queue.length === 0) {
      const req = this.pendingShutdown
      await this.runModelTurn(shutdownPrompt(req), [])
      const answer = this.options.turnLog.shutdownResponses.get(req.requestId)
      this.pendingShutdown = undefined
      if (answer && !answer.approve) {
        this.options.output.info(`shutdown rejected: ${answer.reason ?? '(no reason)'}`)
        return
      }
      await this.approveShutdown(req)
      this.stop()
    }
  }

  private async runModelTurn(text: string, batch: InboxMessage[], taskId?: string): Promise<TurnResult | undefined> {
    this.turnStarted = true
    const onItsWay = turnOnItsWay()
    let result: TurnResult | undefined
    let failure: string | undefined
    try {
      // Its write is not awaited: the status after it (idle, exited, the next turn's waiting…)
      // goes in the same write and fails with it; awaited at the turn's end, it held the read
      // mark and the idle back until its delay ran out.
      await this.startStatus('working', taskId ? `task #${taskId}` : undefined, true)
      appendUserText(this.options.messages, text)
      await this.options.transcript.append({ kind: 'message', message: this.options.messages[this.options.messages.length - 1] })
      result = await this.requestTurn(onItsWay)
    } catch (err) {
      this.options.output.flush()
      failure = describeFailure(err)
      this.options.output.warn(`turn failed: ${failure}`)
      await this.options.transcript.append(errorEvent(err))
    } finally {
      onItsWay()
    }
    // The turn's bookkeeping (read mark, state, idle notification) after the other members' requests (agent/turn-starts.ts).
    if (!this.stopRequested) await afterTurnStarts()
    // Read only once the turn consumed them (a crash before this point re-delivers them). An
    // aborted turn did not: like a crash, its messages stay unread for the next start (--resume
    // drops the cut-off turn from the conversation).
    if (result?.status !== 'aborted') await this.consume(batch)
    if (this.guards.halted) failure = this.guards.halted
    this.lastTurn = { result, failure, taskId }
    return result
  }

  /** The turn's model requests and tools (runTurn), with what this member gives it. */
  private async requestTurn(onRequestSent: () => void): Promise<TurnResult> {
    const result = await runTurn({
      client: this.options.client,
      model: this.options.model,
      system: this.options.system,
      ...(this.options.cache ? { cache: this.options.cache } : {}),
      tools: this.currentTools,
      messages: this.options.messages,
      maxIterations: this.options.maxIterations,
      signal: this.turnAbort.signal,
      toolContext: {
        cwd: this.options.cwd,
        signal: this.turnAbort.signal,
        agentName: this.options.name,
        teamName: this.options.team,
        env: this.options.env,
        checkPermission: this.options.checkPermission,
        ...(this.options.writableRoots ? { writableRoots: this.options.writableRoots } : {}),
        sandbox: this.options.sandbox,
        meter: this.meter,
      },
      onText: (d) => this.options.output.text(d),
      onToolEnd: (name, input, res, ms) => this.options.output.tool(name, input, res, ms),
      record: (...events) => this.options.transcript.append(...events),
      onRequestSent,
      ...this.guards.hooks(),
    })
    this.options.output.flush()
    if (result.status === 'partial')
      this.options.output.warn(`turn stopped after ${result.iterations} model calls: the agent definition's maxTurns — partial`)
    return result
  }

  private lastTurn: LastTurn | undefined
  /** Whether a turn has run: the first-turn warm-up is then pointless. */
  private turnStarted = false

  /** One request this member caused: added to its spend, and to its state.json (an addition, never an overwrite). */
  private async addSpend(model: string, u: Usage): Promise<void> {
    const costUsd = estimateCost(model, u)
    this.usage = addUsage(this.usage, u)
    this.costUsd += costUsd
    await this.options.state.addSpend({ usage: u, costUsd }, { turns: (this.options.state.current.turns ?? 0) + 1 })
  }

  /** One idle_notification per transition to idle, with what the turn did. */
  private async goIdle(_: undefined): Promise<void> {
    const last = this.lastTurn
    this.lastTurn = undefined
    // Tasks completed since the last idle, also in turns that ran back to back (queued messages).
    const completedIds = this.options.turnLog.completedTaskIds.splice(0)
    await this.setStatus('idle')
    // The lead is the one idle notifications go to; it does not notify itself.
    if (!last || this.options.name === LEAD_NAME) return
    await sendIdleNotification(this.options.team, this.options.name, idleReport(last, completedIds[completedIds.length - 1]), this.options.env)
  }

  private async sendToLead(text: string, summary?: string): Promise<void> {
    await sendTeamMessage({
      team: this.options.team,
      from: this.options.name,
      to: LEAD_NAME,
      text,
      ...(summary ? { summary } : {}),
      env: this.options.env,
    })
  }

  private async approveShutdown(req: StructuredMessage & { type: 'shutdown_request' }): Promise<void> {
    const approved: StructuredMessage = {
      type: 'shutdown_approved',
      requestId: req.requestId,
      from: this.options.name,
      timestamp: new Date().toISOString(),
    }
    await this.sendToLead(encodeStructured(approved), 'shutdown approved')
    this.options.output.info('shutdown approved; exiting')
    this.pendingShutdown = undefined
  }

  /** After a turn, with nothing in the inbox: claim the next unowned, unblocked task. */
  private async maybeClaimTask(): Promise<boolean> {
    if (this.options.autoClaimTasks === false || this.stopRequested) return false
    const next = await claimNextTask({
      team: this.options.team,
      name: this.options.name,
      env: this.options.env,
      warn: (line) => this.options.output.warn(line),
    })
    if (!next) return false
    await this.options.state.update({ currentTask: next.id })
    await this.runModelTurn(next.prompt, [], next.id)
    await this.options.state.update({ currentTask: undefined })
    return true
  }
}
