import { APIError } from '@anthropic-ai/sdk'
import { oneLine, type IdleReport } from '../teams/idle-notification.js'
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
 * What a teammate's idle notification says about the turn that ended (its last text, or partial /
 * failed) and the task it completed; `teams/idle-notification.ts` gives it its shape and cap.
 */
export function idleReport(last: LastTurn, completedTaskId: string | undefined): IdleReport {
  const summary = last.failure
    ? `turn failed: ${last.failure}`
    : last.result?.status === 'partial'
      ? `stopped after ${last.result.iterations} model calls (maxTurns) — partial: ${last.result.text}`
      : last.result?.status === 'stopped'
        ? `stopped: ${last.result.stopReason ?? 'no reason'}`
        : (last.result?.text ?? '')
  return {
    idleReason: last.failure
      ? 'failed'
      : last.result?.status === 'aborted'
        ? 'interrupted'
        : last.result?.status === 'stopped'
          ? 'budget_exhausted'
          : 'available',
    summary,
    ...(completedTaskId ? { completedTaskId, completedStatus: last.result?.status === 'partial' ? 'partial' : 'resolved' } : {}),
    ...(last.failure ? { failureReason: last.failure } : {}),
  }
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
