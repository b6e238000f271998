/**
 * The `<task-notification>` a parent receives, as a user message at the start of its next turn,
 * when a background subagent completes, fails or is stopped (the references' format, usage
 * included). Text from the subagent is data: `<`, `>` and `&` are escaped, so a report can neither
 * close the element nor forge a second notification.
 */

export type TaskStatus = 'completed' | 'failed' | 'stopped'

export interface TaskUsage {
  totalTokens: number
  toolUses: number
  durationMs: number
}

export interface TaskNotification {
  taskId: string
  status: TaskStatus
  summary: string
  result?: string
  usage: TaskUsage
  /** Extra elements after `<result>` (a coordinator worker's file check, a verifier's verdict). */
  extra?: Record<string, string>
}

export const NOTIFICATION_TAG = 'task-notification'

export function formatTaskNotification(n: TaskNotification): string {
  const lines = [
    `<${NOTIFICATION_TAG}>`,
    `<task-id>${escapeXml(n.taskId)}</task-id>`,
    `<status>${n.status}</status>`,
    `<summary>${escapeXml(n.summary)}</summary>`,
  ]
  if (n.result !== undefined && n.result !== '') lines.push(`<result>${escapeXml(n.result)}</result>`)
  for (const [tag, value] of Object.entries(n.extra ?? {})) lines.push(`<${tag}>${escapeXml(value)}</${tag}>`)
  lines.push(
    `<usage><total_tokens>${n.usage.totalTokens}</total_tokens><tool_uses>${n.usage.toolUses}</tool_uses><duration_ms>${n.usage.durationMs}</duration_ms></usage>`,
    `</${NOTIFICATION_TAG}>`,
  )
  return lines.join('\n')
}

/** The human-readable summary for each outcome ("completed" / "failed: …" / "was stopped"). */
export function summaryFor(description: string, status: TaskStatus, error?: string): string {
  const who = `Agent ${JSON.stringify(description)}`
  if (status === 'completed') return `${who} completed`
  if (status === 'stopped') return `${who} was stopped`
  return `${who} failed: ${error ?? 'unknown error'}`
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
