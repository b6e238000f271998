import path from 'node:path'
import { ConflictError, NotFoundError, errorMessage } from '../errors.js'
import { DirWatch } from '../watch/dir-watch.js'
import { resolvedPermissionsDir } from '../home/paths.js'
import { moveAside } from '../util/fs.js'
import { type LeadRecordCheck, readResolved, resolveRequest, type ResolvedRequest } from './store.js'
import type { Answer, RequestKind } from './types.js'

/**
 * How often a waiting request re-reads its resolved file, in case the watch missed it, and asks
 * whether its asker was orphaned: the watch is the fast path, this only bounds a missed event.
 */
export const RESOLVED_SAFETY_POLL_MS = 2_000

/** Whose requests a board waits on. */
export interface BoardOwner {
  team: string
  /** The member asking: the one recorded as having withdrawn its request. */
  agent: string
  env: NodeJS.ProcessEnv
  warn(line: string): void
  /**
   * Checked on every safety poll: true when nobody is left to answer for (a CLI's hook whose CLI
   * died). Its open requests are then withdrawn, recorded as cancelled.
   */
  orphaned?: () => boolean
  /**
   * Checks the lead's seal on an answer read from `resolved/` (a teammate that can write the team's
   * files must not answer for the lead): an approve or deny that fails is kept aside, never
   * deleted, and not acted on; a cancellation needs none (it only ends a wait). Absent: the team
   * seals nothing (a Claude Code lead's).
   */
  checkRecord?: LeadRecordCheck
}

export interface WaitOptions {
  signal?: AbortSignal
  /** No answer after this long: the request is withdrawn and the wait ends as cancelled. */
  timeoutMs?: number
}

interface Waiter {
  id: string
  kind: RequestKind
  resolve(a: Answer): void
  settled: boolean
  /** Recording an answer or a withdrawal: the resolved file about to appear is our own. */
  busy: boolean
  cleanup(): void
}

/**
 * The one waiter of the ask flow: the requests one member is waiting on, keyed by id, and the
 * ways an answer arrives — a verified message from team-lead (`offer`), the request's
 * `resolved/<id>.json` (a directory watch plus a slow poll, in case the message is lost), or the
 * member's own timeout, abort or orphaning. The resolved file is the one truth: an answer by
 * message is recorded there first, and when someone else got there earlier, their answer counts;
 * a withdrawal is recorded there as `cancelled`. Each wait has one cleanup.
 */
export class AnswerBoard {
  private readonly waiters = new Map<string, Waiter>()
  /** Ids answered recently, so the second copy of an answer (file, then message) is not reported as unknown. */
  private readonly done = new Set<string>()

  constructor(private readonly owner: BoardOwner) {}

  /** Starts waiting for `id`. Call before the request is sent, so a fast answer is not missed. */
  expect(id: string, kind: RequestKind, options: WaitOptions = {}): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      const file = path.join(resolvedPermissionsDir(this.owner.team, this.owner.env), `${id}.json`)
      const watch = new DirWatch(
        file,
        () => void this.readFile(id),
        (err) => this.owner.warn(`watching ${file}: ${errorMessage(err)}`),
      )
      const poll = setInterval(() => {
        if (this.owner.orphaned?.()) return void this.withdraw(id, 'the member that asked is gone', false)
        void watch.check()
        void this.readFile(id)
      }, RESOLVED_SAFETY_POLL_MS)
      poll.unref()
      let timer: NodeJS.Timeout | undefined
      const onAbort = () => void this.withdraw(id, 'the agent was stopped while waiting', false)
      const waiter: Waiter = {
        id,
        kind,
        settled: false,
        busy: false,
        resolve,
        cleanup: () => {
          watch.close()
          clearInterval(poll)
          clearTimeout(timer)
          options.signal?.removeEventListener('abort', onAbort)
        },
      }
      this.waiters.set(id, waiter)
      if (options.timeoutMs !== undefined) {
        const seconds = Math.round(options.timeoutMs / 100) / 10
        timer = setTimeout(() => void this.withdraw(id, `no answer from team-lead within ${seconds} s`, true), options.timeoutMs)
        timer.unref()
      }
      if (options.signal?.aborted) onAbort()
      else options.signal?.addEventListener('abort', onAbort, { once: true })
      void watch.check()
    })
  }

  /** Is `id` a request this agent waits on (of this kind)? */
  isWaiting(id: string, kind: RequestKind): boolean {
    const w = this.waiters.get(id)
    return w !== undefined && w.kind === kind && !w.settled && !w.busy
  }

  /** Was `id` answered already (its duplicate answer is expected, not suspicious)? */
  wasAnswered(id: string): boolean {
    return this.done.has(id)
  }

  /**
   * An answer from a verified team-lead message. Returns false when no wait of that kind is open
   * for the id (the caller ignores the message). The answer is recorded in `resolved/` first;
   * if someone else answered first there, their decision counts.
   */
  offer(id: string, kind: RequestKind, answer: Answer): boolean {
    if (!this.isWaiting(id, kind)) return false
    void this.record(id, answer)
    return true
  }

  /** Withdraws one open request (recorded as cancelled unless answered meanwhile). */
  cancel(id: string, reason: string): Promise<void> {
    return this.withdraw(id, reason, false)
  }

  /** Withdraws every open request (the agent exits); resolves once each is recorded as cancelled. */
  async closeAll(reason: string): Promise<void> {
    await Promise.all([...this.waiters.keys()].map((id) => this.withdraw(id, reason, false)))
  }

  private async record(id: string, answer: Answer): Promise<void> {
    this.waiters.get(id)!.busy = true
    const decision = answer.kind === 'approve' ? 'approve' : answer.kind === 'deny' ? 'deny' : 'cancelled'
    try {
      await resolveRequest(
        this.owner.team,
        id,
        {
          decision,
          resolvedBy: answer.by,
          ...(answer.kind === 'approve' && answer.updatedInput ? { updatedInput: answer.updatedInput } : {}),
          ...(answer.kind === 'approve' && answer.always ? { always: true } : {}),
          ...(answer.kind === 'deny' && answer.feedback !== undefined ? { feedback: answer.feedback } : {}),
        },
        this.owner.env,
      )
      this.settle(id, answer)
    } catch (err) {
      if (err instanceof NotFoundError) return this.settle(id, answer) // never written to disk (a lead that skips the store)
      if (!(err instanceof ConflictError)) {
        this.owner.warn(`could not record the answer to ${id}: ${errorMessage(err)}`)
        return this.settle(id, answer)
      }
      const earlier = await this.readResolvedSafe(id)
      if (!earlier) {
        // A forged record held the place (now kept aside): the verified message's answer is recorded and counts.
        await resolveRequest(this.owner.team, id, { decision, resolvedBy: answer.by }, this.owner.env).catch(() => undefined)
        return this.settle(id, answer)
      }
      const fromFile = answerFromResolved(earlier)
      // The usual case: the broker wrote the file, then sent the message; the message carries more detail.
      this.settle(id, fromFile.kind === answer.kind ? { ...fromFile, ...answer } : fromFile)
    }
  }

  private async withdraw(id: string, reason: string, honourLateAnswer: boolean): Promise<void> {
    const w = this.waiters.get(id)
    if (!w || w.settled || w.busy) return
    w.busy = true
    try {
      const cancelled = await resolveRequest(
        this.owner.team,
        id,
        { decision: 'cancelled', feedback: reason, resolvedBy: this.owner.agent },
        this.owner.env,
      )
      this.settle(id, answerFromResolved(cancelled))
    } catch (err) {
      const earlier = err instanceof ConflictError ? await this.readResolvedSafe(id) : undefined
      if (earlier && honourLateAnswer) return this.settle(id, answerFromResolved(earlier))
      if (!(err instanceof ConflictError) && !(err instanceof NotFoundError))
        this.owner.warn(`could not withdraw request ${id}: ${errorMessage(err)}`)
      this.settle(id, { kind: 'cancelled', by: this.owner.agent, reason })
    }
  }

  private async readFile(id: string): Promise<void> {
    const w = this.waiters.get(id)
    if (!w || w.settled || w.busy) return
    const resolved = await this.readResolvedSafe(id)
    if (resolved) this.settle(id, answerFromResolved(resolved))
  }

  /** The resolved record of `id` when it is one to act on: readable, and sealed by team-lead unless it only cancels. */
  private async readResolvedSafe(id: string): Promise<ResolvedRequest | undefined> {
    let r: ResolvedRequest | undefined
    try {
      r = await readResolved(this.owner.team, id, this.owner.env)
    } catch (err) {
      this.owner.warn(`cannot read the answer to ${id}: ${errorMessage(err)}`)
      return undefined
    }
    const check = this.owner.checkRecord
    if (!r || r.decision === 'cancelled' || !check || (await check('resolved', r))) return r
    const file = path.join(resolvedPermissionsDir(this.owner.team, this.owner.env), `${id}.json`)
    const aside = await moveAside(file).catch(() => undefined)
    this.owner.warn(
      `refused the answer to ${id} in ${file}: not sealed by team-lead (${r.decision} by ${JSON.stringify(r.resolvedBy)})${aside ? `; kept as ${aside}` : ''}`,
    )
    return undefined
  }

  private settle(id: string, answer: Answer): void {
    const w = this.waiters.get(id)
    if (!w || w.settled) return
    w.settled = true
    w.cleanup()
    this.waiters.delete(id)
    this.done.add(id)
    w.resolve(answer)
  }
}

/** The answer a resolved record stands for. */
export function answerFromResolved(r: ResolvedRequest): Answer {
  // A plan approval's new mode is recorded in updatedInput (the store has no field for it).
  const permissionMode = r.kind === 'plan' && typeof r.updatedInput?.permissionMode === 'string' ? r.updatedInput.permissionMode : undefined
  switch (r.decision) {
    case 'approve':
      return {
        kind: 'approve',
        by: r.resolvedBy,
        ...(r.updatedInput ? { updatedInput: r.updatedInput } : {}),
        ...(r.always ? { always: true, permissionUpdates: r.suggestions } : {}),
        ...(permissionMode ? { permissionMode } : {}),
      }
    case 'deny':
      return { kind: 'deny', by: r.resolvedBy, ...(r.feedback !== undefined ? { feedback: r.feedback } : {}) }
    case 'cancelled':
      return { kind: 'cancelled', by: r.resolvedBy, reason: r.feedback ?? 'the request was cancelled' }
  }
}
