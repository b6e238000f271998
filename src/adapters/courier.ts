/**
 * Exactly-once delivery of a teammate's inbox into its agent CLI's pane. Messages wait while the
 * agent works; once it is idle, every queued message goes in one prompt (bracketed paste, the
 * submit key after the CLI's settle delay). A prompt counts as delivered only when the CLI confirms
 * it (its prompt-submit hook logged the prompt's digest); unconfirmed, it is submitted again —
 * Enter alone while the text still shows in the pane, pasted again only when it does not — and a
 * confirmed prompt is never sent again. Only then are the messages marked read. A lead order
 * counts only through the member's one gate (trust/gate), as it does for swarm's own agent.
 */
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import type { PaneIo } from '../backends/pane-io.js'
import { readMemberState } from '../store/member-state.js'
import { errorMessage } from '../errors.js'
import { agentDir, inboxPath } from '../home/paths.js'
import { markRead } from '../mailbox/inbox.js'
import { parseStructured } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { watchInbox, type InboxWatcher } from '../mailbox/watch.js'
import { delay } from '../process/delay.js'
import { claudeLeadOf } from '../teams/claude-lead.js'
import { readTeam } from '../teams/team-store.js'
import { isLeadOrder, LeadGate, refusalReason } from '../trust/gate.js'
import { promptDigest, readHookLog } from './hook-log.js'
import { batchText, classifyMessage } from './message-text.js'
import type { AgentAdapter, PromptBox } from './types.js'
import type { Env } from '../home/env.js'

/** How long one submission may take to be confirmed before it is retried. */
export const CONFIRM_MS = 4_000
/** Submissions of one prompt before the courier gives up on it (its messages stay unread). */
export const MAX_ATTEMPTS = 4
const POLL_MS = 40

export interface CourierOptions {
  team: string
  name: string
  adapter: AgentAdapter
  pane: PaneIo
  env: Env
  /** The first prompt is in the CLI's argv: wait for its first turn to end before pasting. */
  promptInArgv: boolean
  /** The CLI's prompt box over its HTTP API (delivery `http`: opencode's /tui/append-prompt…). */
  promptBox?: PromptBox
  /** A verified shutdown_request arrived: quit the CLI its own way. */
  onShutdown(requestId: string): Promise<void>
  confirmMs?: number
}

export class Courier {
  private queue: InboxMessage[] = []
  private watcher: InboxWatcher | undefined
  private wake: (() => void) | undefined
  private closed = false
  private running: Promise<void> | undefined
  private gate: Promise<LeadGate | undefined> | undefined
  private readonly logFile: string

  constructor(private readonly options: CourierOptions) {
    this.logFile = path.join(agentDir(options.team, options.name, options.env), 'courier.log')
  }

  start(): void {
    // The member's one gate for lead orders, opened before the first message is judged.
    this.gate = this.openGate()
    this.watcher = watchInbox(this.options.team, this.options.name, (unread) => this.enqueue(unread), {
      env: this.options.env,
      onError: (err) => void this.log(`inbox: ${errorMessage(err)}`),
    })
    this.running = this.loop().catch((err: unknown) => this.log(`stopped: ${errorMessage(err)}`))
  }

  async close(): Promise<void> {
    this.closed = true
    this.wake?.()
    await this.watcher?.close()
    await this.running
  }

  private async openGate(): Promise<LeadGate | undefined> {
    try {
      const team = await readTeam(this.options.team, this.options.env)
      return await LeadGate.open({
        team: this.options.team,
        name: this.options.name,
        env: this.options.env,
        claudeLed: claudeLeadOf(team) !== undefined,
      })
    } catch (err) {
      await this.log(`no lead order will be acted on: ${errorMessage(err)}`)
      return undefined
    }
  }

  private async enqueue(unread: InboxMessage[]): Promise<void> {
    const gate = await this.gate
    for (const m of unread) {
      const order = parseStructured(m.text)
      if (isLeadOrder(order)) {
        const verdict = gate ? await gate.acceptLeadOrder(m) : 'unverified'
        if (verdict !== 'verified') {
          await this.log(`ignored ${order.type} from ${m.from}: ${refusalReason(verdict)}`)
          // Never acted on, never pasted: consumed, so it is not judged again at every start.
          await this.markRead([m])
          continue
        }
      }
      this.queue.push(m)
    }
    this.wake?.()
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      if (this.queue.length === 0 || !(await this.ready())) {
        await new Promise<void>((resolve) => {
          this.wake = resolve
          setTimeout(resolve, 250)
        })
        continue
      }
      const batch = this.queue.splice(0)
      const texts: string[] = []
      const skipped: InboxMessage[] = []
      for (const m of batch) {
        const c = classifyMessage(m)
        if (c.kind === 'shutdown') {
          await this.markRead([m])
          await this.options.onShutdown(c.requestId)
        } else if (c.kind === 'skip') skipped.push(m)
        else texts.push(c.text)
      }
      await this.markRead(skipped)
      const pasted = batch.filter((m) => !skipped.includes(m) && classifyMessage(m).kind === 'text')
      if (texts.length === 0) continue
      if (await this.deliver(batchText(texts))) await this.markRead(pasted)
      else this.queue.unshift(...pasted) // not confirmed after every attempt: tried again when next idle
    }
  }

  /** Idle, or (first prompt not in argv) the CLI has started its session. */
  private async ready(): Promise<boolean> {
    const state = await readMemberState(this.options.team, this.options.name, this.options.env).catch(() => undefined)
    if (state?.status === 'idle') return true
    if (state?.status === 'starting' && !this.options.promptInArgv) {
      const log = await readHookLog(this.options.team, this.options.name, this.options.env)
      if (log.some((e) => e.event === 'session-start')) return true
    }
    return false
  }

  /** Submits one prompt; true once the CLI confirmed it (exactly once). */
  async deliver(text: string): Promise<boolean> {
    const digest = promptDigest(text)
    const delivery = this.options.adapter.delivery
    const from = (await readHookLog(this.options.team, this.options.name, this.options.env)).length
    if (delivery.method === 'http' && this.options.promptBox) return this.deliverHttp(this.options.promptBox, text, digest, from)
    if (delivery.method !== 'paste') return false
    const probe = probeOf(text)
    for (let attempt = 1; attempt <= MAX_ATTEMPTS && !this.closed; attempt++) {
      // 1: paste + Enter. 2: Enter alone (the first became a newline). Later: Enter while the text
      // shows in the pane, else paste again (the paste was lost).
      const repaste = attempt === 1 || (attempt > 2 && !(await this.options.pane.screen().catch(() => '')).includes(probe))
      if (repaste) {
        await this.options.pane.paste(text, delivery.chunk)
        await delay(delivery.settleMs)
      }
      await this.options.pane.keys(delivery.submitKeys)
      const seen = await this.submitted(digest, from, this.options.confirmMs ?? CONFIRM_MS)
      if (seen) {
        if (attempt > 1 || seen === 'other')
          await this.log(
            `prompt ${digest}: ${seen === 'exact' ? 'confirmed' : 'a different prompt was submitted (counted as this one, never sent again)'} after ${attempt} submission(s)`,
          )
        return true
      }
      await this.log(`prompt ${digest} (${text.length} chars) not confirmed after attempt ${attempt}`)
    }
    return false
  }

  /**
   * Over the CLI's API: the box is cleared first on a retry (a lost submit left the text in it),
   * so a prompt is typed whole each time and submitted again only while none was confirmed.
   */
  private async deliverHttp(box: PromptBox, text: string, digest: string, from: number): Promise<boolean> {
    // Its events may lag behind (a loaded machine): what the CLI itself holds decides a resend —
    // one more prompt of this digest than before the first attempt (the same text may come twice).
    const held = async () => (await box.lastUserTexts()).filter((t) => promptDigest(t) === digest).length
    const before = await held().catch(() => 0)
    for (let attempt = 1; attempt <= MAX_ATTEMPTS && !this.closed; attempt++) {
      try {
        if (attempt > 1 && (await held()) > before) {
          await this.log(`prompt ${digest}: submitted (found in its session, its event came late) after ${attempt - 1} attempt(s)`)
          return true
        }
        if (attempt > 1) await box.clearPrompt()
        await box.appendPrompt(text)
        await box.submitPrompt()
      } catch (err) {
        await this.log(`prompt ${digest}: attempt ${attempt} failed: ${errorMessage(err)}`)
      }
      const seen = await this.submitted(digest, from, this.options.confirmMs ?? CONFIRM_MS)
      if (seen) {
        if (attempt > 1 || seen === 'other') await this.log(`prompt ${digest}: ${seen} submission confirmed after ${attempt} attempt(s)`)
        return true
      }
      await this.log(`prompt ${digest} (${text.length} chars) not confirmed after attempt ${attempt}`)
    }
    return false
  }

  /**
   * `exact`: the CLI's prompt-submit hook saw this prompt. `other`: it saw a prompt that is not
   * exactly this one (the text was altered on the way) — something of ours was submitted, so it is
   * never submitted again. Undefined: nothing was submitted within `waitMs`.
   */
  private async submitted(digest: string, from: number, waitMs: number): Promise<'exact' | 'other' | undefined> {
    const deadline = Date.now() + waitMs
    for (;;) {
      const submits = (await readHookLog(this.options.team, this.options.name, this.options.env))
        .slice(from)
        .filter((e) => e.event === 'prompt-submit')
      if (submits.some((e) => e.digest === digest)) return 'exact'
      if (Date.now() >= deadline || this.closed) return submits.length ? 'other' : undefined
      await delay(POLL_MS)
    }
  }

  private async markRead(messages: InboxMessage[]): Promise<void> {
    const ids = messages.map((m) => m.msg_id).filter((id): id is string => typeof id === 'string')
    if (ids.length) await markRead(inboxPath(this.options.team, this.options.name, this.options.env), { msgIds: ids })
  }

  private async log(line: string): Promise<void> {
    await appendFile(this.logFile, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 }).catch(() => undefined) // the log is diagnostics only
  }
}

/** A piece of the text a screen shows once pasted: its last non-empty line, at most 24 characters. */
function probeOf(text: string): string {
  const line =
    text
      .split('\n')
      .filter((l) => l.trim())
      .pop() ?? text
  return line.trim().slice(-24)
}
