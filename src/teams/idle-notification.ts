/**
 * The one idle_notification a teammate sends team-lead when it goes idle, whatever kind of member
 * it is (swarm's agent after a turn, an agent CLI's `stop` hook): one shape, and a summary that
 * is a preview, never longer than IDLE_SUMMARY_MAX whatever prefix the turn's outcome put on it.
 */
import { LEAD_NAME } from '../home/paths.js'
import { encodeStructured, type MessageOf } from '../mailbox/messages.js'
import { sendTeamMessage } from './messaging.js'
import type { Env } from '../home/env.js'

export type IdleNotification = MessageOf<'idle_notification'>

/** The longest summary an idle notification carries, prefixes ("turn failed: ", "… — partial: ") included. */
export const IDLE_SUMMARY_MAX = 200
/** How much of it the inbox entry's own `summary` (the one-line preview in listings) shows. */
const ENTRY_PREVIEW_MAX = 60

/** What the member says about the turn that ended. */
export interface IdleReport {
  idleReason: NonNullable<IdleNotification['idleReason']>
  /** Capped here (IDLE_SUMMARY_MAX): pass it whole. */
  summary?: string
  completedTaskId?: string
  completedStatus?: IdleNotification['completedStatus']
  failureReason?: string
}

/** Whitespace folded, at most `max` characters (an ellipsis marks a cut). */
export function oneLine(s: string, max = IDLE_SUMMARY_MAX): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > max ? t.slice(0, max - 3) + '...' : t
}

export function idleNotification(from: string, report: IdleReport): IdleNotification {
  const { idleReason, summary, ...rest } = report
  const capped = summary === undefined ? '' : oneLine(summary)
  return { type: 'idle_notification', from, timestamp: new Date().toISOString(), idleReason, ...(capped && { summary: capped }), ...rest }
}

/** Sends `from`'s idle notification to team-lead; returns what was sent. */
export async function sendIdleNotification(team: string, from: string, report: IdleReport, env?: Env): Promise<IdleNotification> {
  const note = idleNotification(from, report)
  await sendTeamMessage({
    team,
    from,
    to: LEAD_NAME,
    text: encodeStructured(note),
    summary: note.summary ? `idle: ${note.summary.slice(0, ENTRY_PREVIEW_MAX)}` : 'idle',
    ...(env && { env }),
  })
  return note
}
