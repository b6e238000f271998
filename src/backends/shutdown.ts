import { UsageError } from '../errors.js'
import { readInbox } from '../mailbox/inbox.js'
import { createEntry, type NewMessage } from '../mailbox/entry.js'
import { type MessageOf, encodeStructured, parseStructured } from '../mailbox/messages.js'
import { deliverAddressed } from '../mailbox/send.js'
import type { InboxMessage } from '../mailbox/types.js'
import { LEAD_NAME, inboxPath, validateAgentName, validateName } from '../home/paths.js'
import { delay } from '../process/delay.js'
import type { TeammateExecutor, TerminateOptions, TerminateOutcome } from './types.js'
import { type Sealer, seal } from '../trust/sign.js'
import type { Env } from '../home/env.js'

/** How long terminate waits for a teammate to stop by itself. */
export const GRACEFUL_STOP_MS = 10_000
const POLL_MS = 100
/** After approving, a teammate gets this long to exit by itself before its pane is closed. */
const APPROVED_EXIT_MS = 2_000

/** Splits `<name>@<team>` (both validated). UsageError otherwise. */
export function parseAgentId(agentId: string): { name: string; team: string } {
  const at = agentId.lastIndexOf('@')
  if (at <= 0 || at === agentId.length - 1) throw new UsageError(`not an agent id: ${JSON.stringify(agentId)}`, { hint: 'expected <name>@<team>' })
  const name = agentId.slice(0, at)
  const team = agentId.slice(at + 1)
  return { name: validateAgentName(name), team: validateName(team) }
}

export interface ShutdownDeps {
  env?: Env
  /** Seals team-lead's entries: its signer, or `claude-lead` in a team led by Claude Code. Without one no lead entry is written. */
  sign?: Sealer
  /** Sender; default team-lead. */
  from?: string
}

/**
 * Writes one entry into the agent's inbox through its author's seal (trust/sign `seal`, the one
 * way a lead entry is written): an entry from team-lead without a sealer is refused before anything
 * is written, so no path — an executor's sendMessage, a shutdown — writes an unsigned lead order.
 */
export async function sendToInbox(agentId: string, message: NewMessage | InboxMessage, deps: ShutdownDeps = {}): Promise<void> {
  const { name, team } = parseAgentId(agentId)
  const entry = createEntry(message as NewMessage)
  await deliverAddressed(team, seal([{ to: name, entry }], sealerOf(entry.from, deps)), deps.env)
}

/** Whether team-lead's entries can be sealed here: a lead whose `lead.key` is lost sends no order (its stop is forced). */
export function canSealLeadEntries(deps: Pick<ShutdownDeps, 'sign' | 'from'>): boolean {
  return (deps.from ?? LEAD_NAME) !== LEAD_NAME || deps.sign !== undefined
}

function sealerOf(from: string, deps: ShutdownDeps): Sealer {
  return from === LEAD_NAME ? (deps.sign ?? 'teammate') : 'teammate'
}

/**
 * `shutdown-<ms>@<name>`: the only form Claude Code accepts (any other id is shown to its model as
 * invalid and its answer cannot be matched). Unique per teammate and millisecond.
 */
export function shutdownRequestId(name: string, now: number = Date.now()): string {
  return `shutdown-${now}@${name}`
}

/** Writes a (signed) shutdown_request into the teammate's inbox; returns its requestId. */
export async function requestShutdown(agentId: string, reason: string | undefined, deps: ShutdownDeps = {}): Promise<string> {
  const { name } = parseAgentId(agentId)
  const from = deps.from ?? LEAD_NAME
  const request: MessageOf<'shutdown_request'> = {
    type: 'shutdown_request',
    requestId: shutdownRequestId(name),
    from,
    ...(reason !== undefined && { reason }),
    timestamp: new Date().toISOString(),
  }
  await sendToInbox(agentId, { from, text: encodeStructured(request), summary: 'shutdown request' }, deps)
  return request.requestId
}

/**
 * The teammate's answer to `requestId` in the requester's inbox, if any: a `shutdown_approved` or
 * `shutdown_rejected` from that teammate. The inbox is only read; the leader consumes it.
 */
export async function findShutdownAnswer(
  agentId: string,
  requestId: string,
  deps: ShutdownDeps = {},
): Promise<{ approved: true } | { approved: false; reason: string } | undefined> {
  const { name, team } = parseAgentId(agentId)
  const inbox = await readInbox(inboxPath(team, deps.from ?? LEAD_NAME, deps.env))
  for (const m of inbox) {
    if (m.from !== name) continue
    const s = parseStructured(m.text)
    if (!s || !('requestId' in s) || s.requestId !== requestId) continue
    if (s.type === 'shutdown_approved') return { approved: true }
    if (s.type === 'shutdown_rejected') return { approved: false, reason: s.reason }
  }
  return undefined
}

/**
 * terminate() for every backend: shutdown_request, then wait until the process ends or the
 * teammate answers. An ended or approving teammate is then killed, which closes its pane and
 * reaps what is left of its tree; a rejection or the timeout leaves it running.
 */
export async function gracefulStop(
  executor: Pick<TeammateExecutor<unknown>, 'status' | 'kill'>,
  agentId: string,
  reason: string | undefined,
  opts: TerminateOptions,
  deps: ShutdownDeps,
): Promise<TerminateOutcome> {
  const before = (await executor.status([agentId])).get(agentId)
  if (before?.state !== 'alive') {
    await executor.kill(agentId)
    return { outcome: 'exited' }
  }
  // No sealer (the lead's key is lost): an unsigned request would be ignored, so none is sent; the caller forces the stop.
  if (!canSealLeadEntries(deps)) return { outcome: 'timeout' }
  const requestId = await requestShutdown(agentId, reason, deps)
  const deadline = Date.now() + (opts.timeoutMs ?? GRACEFUL_STOP_MS)
  let approvedAt: number | undefined
  while (Date.now() < deadline && !opts.signal?.aborted) {
    await delay(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), opts.signal)
    const state = (await executor.status([agentId])).get(agentId)
    if (state?.state !== 'alive') {
      // An answer written just before the exit (Claude Code approves, then leaves) is still an approval.
      const approved = approvedAt !== undefined || (await findShutdownAnswer(agentId, requestId, deps))?.approved === true
      await executor.kill(agentId)
      return { outcome: approved ? 'approved' : 'exited' }
    }
    if (approvedAt !== undefined) {
      // It approved: give it a moment to finish its turn and exit by itself, then close it.
      if (Date.now() - approvedAt < APPROVED_EXIT_MS) continue
      await executor.kill(agentId)
      return { outcome: 'approved' }
    }
    const answer = await findShutdownAnswer(agentId, requestId, deps)
    if (answer?.approved) approvedAt = Date.now()
    else if (answer) return { outcome: 'rejected', reason: answer.reason }
  }
  if (approvedAt !== undefined) {
    await executor.kill(agentId)
    return { outcome: 'approved' }
  }
  return { outcome: 'timeout' }
}
