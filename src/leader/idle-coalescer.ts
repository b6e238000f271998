import type { InboxMessage } from '../mailbox/types.js'

/**
 * Idle notifications on their way to the lead agent, gathered into one delivery: a broadcast's
 * recipients go idle within a second of each other, and handed over one by one they woke the
 * lead's model for a turn each while the rest were still arriving (issue 25: 64 teammates, 64
 * notifications converging on team-lead). One is held until none came for IDLE_QUIET_MS, at most
 * IDLE_HOLD_MAX_MS after the first; anything else for the lead flushes what is held first, so the
 * lead reads its messages in the order they came.
 */

/** Quiet time after the last idle notification before the held ones go to the lead. */
const IDLE_QUIET_MS = 150
/** The longest an idle notification waits for others. */
const IDLE_HOLD_MAX_MS = 1_000

export class IdleCoalescer {
  private held: InboxMessage[] = []
  private firstAt = 0
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly deliver: (messages: InboxMessage[]) => void) {}

  /** Holds an idle notification for the next delivery. */
  hold(message: InboxMessage): void {
    if (this.held.length === 0) this.firstAt = Date.now()
    this.held.push(message)
    clearTimeout(this.timer)
    const wait = Math.max(0, Math.min(IDLE_QUIET_MS, this.firstAt + IDLE_HOLD_MAX_MS - Date.now()))
    this.timer = setTimeout(() => this.flush(), wait)
    this.timer.unref()
  }

  /** Delivers what is held now (before another message for the lead, or at the end). */
  flush(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.held.length === 0) return
    const batch = this.held
    this.held = []
    this.deliver(batch)
  }
}
