import { APIError } from '@anthropic-ai/sdk'
import type { StructuredMessage } from '../mailbox/messages.js'
import type { NewTranscriptEvent } from './transcript.js'
import type { TurnResult } from './turn.js'

/** How the last turn ended, as the idle notification reports it. */
export interface LastTurn {
  result?: TurnResult
  /** describeFailure() of the error that ended it. */
  failure?: string
  taskId?: string
}

/**
 * The one idle_notification a teammate sends when it goes idle: what the turn did (its last text,
 * or partial / failed), and the task it completed.
 */
export function idleNotification(
  from: string,
  last: LastTurn,
  completedTaskId: string | undefined,
): Extract<StructuredMessage, { type: 'idle_notification' }> {
  const summary = last.failure
    ? `turn failed: ${last.failure}`
    : last.result?.status === 'partial'
      ? `stopped after ${last.result.iterations} model calls (maxTurns) — partial: ${oneLine(last.result.text)}`
      : last.result?.status === 'stopped'
        ? `stopped: ${last.result.stopReason ?? 'no reason'}`
        : oneLine(last.result?.text ?? '')
  return {
    type: 'idle_notification',
    from,
    timestamp: new Date().toISOString(),
    idleReason: last.failure
      ? 'failed'
      : last.result?.status === 'aborted'
        ? 'interrupted'
        : last.result?.status === 'stopped'
          ? 'budget_exhausted'
          : 'available',
    ...(summary ? { summary } : {}),
    ...(completedTaskId ? { completedTaskId, completedStatus: last.result?.status === 'partial' ? 'partial' : 'resolved' } : {}),
    ...(last.failure ? { failureReason: last.failure } : {}),
  }
}

/** Whitespace folded, at most 200 characters. */
export function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > 200 ? t.slice(0, 197) + '...' : t
}

/** "rate_limit_error (status 429, request req_…): message" */
export function describeFailure(err: unknown): string {
  if (err instanceof APIError) {
    const inner = (err.error as { error?: { type?: string; message?: string } } | undefined)?.error
    return `${inner?.type ?? err.name} (status ${err.status ?? 'none'}, request ${err.requestID ?? 'none'}): ${oneLine(inner?.message ?? err.message)}`
  }
  return `${(err as Error)?.name ?? 'Error'}: ${oneLine((err as Error)?.message ?? String(err))}`
}

/** The transcript's record of the error that ended a turn. */
export function errorEvent(err: unknown): NewTranscriptEvent {
  return {
    kind: 'error',
    errorType: err instanceof APIError ? ((err.error as { error?: { type?: string } })?.error?.type ?? err.name) : ((err as Error).name ?? 'Error'),
    status: err instanceof APIError ? err.status : undefined,
    requestId: err instanceof APIError ? (err.requestID ?? undefined) : undefined,
    message: (err as Error).message,
  }
}
