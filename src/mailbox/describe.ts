import { parseStructured, type StructuredMessage } from './messages.js'
import type { InboxMessage } from './types.js'
import { shortRequestId } from '../home/request-id.js'
import { clipped } from '../terminal/clip.js'

/**
 * One readable line (or block, for multi-line plain text) for an inbox entry: its text, labelled
 * with its summary when it has one (`summary — text`), or for a structured message "[type] what it
 * says". Callers make it terminal-safe; the summary label is kept on one line.
 */
export function describeMessage(m: InboxMessage): string {
  const structured = parseStructured(m.text)
  if (structured) return `[${structured.type}] ${describeStructured(structured)}`
  const unknownType = jsonType(m.text)
  if (unknownType) return `[${unknownType}] ${truncate(m.text, 160)}`
  const label = m.summary?.replace(/\s+/g, ' ').trim()
  return label && label !== m.text.trim() ? `${label} — ${m.text}` : m.text
}

function describeStructured(s: StructuredMessage): string {
  switch (s.type) {
    case 'idle_notification': {
      const task = s.completedTaskId ? ` — task #${s.completedTaskId} ${s.completedStatus ?? 'done'}` : ''
      const why = s.failureReason ? `: ${s.failureReason}` : s.summary ? `: ${s.summary}` : ''
      return `${s.from} is idle (${s.idleReason ?? 'available'})${task}${why}`
    }
    case 'permission_request':
      return `${s.agent_id} asks to use ${s.tool_name}: ${s.description} (request ${shortRequestId(s.request_id)})`
    case 'permission_response':
      return `request ${shortRequestId(s.request_id)} ${s.subtype === 'success' ? 'allowed' : 'denied'}${s.error ? `: ${s.error}` : ''}`
    case 'plan_approval_request':
      return `${s.from} asks to approve the plan in ${s.planFilePath} (request ${shortRequestId(s.requestId)})`
    case 'plan_approval_response':
      return `plan ${s.approved ? 'approved' : 'rejected'}${s.feedback ? `: ${s.feedback}` : ''}`
    case 'shutdown_request':
      return `${s.from} asks to shut down${s.reason ? `: ${s.reason}` : ''}`
    case 'shutdown_approved':
      return `${s.from} is shutting down`
    case 'shutdown_rejected':
      return `${s.from} declines to shut down: ${s.reason}`
    case 'task_assignment':
      return `task #${s.taskId} "${s.subject}" assigned by ${s.assignedBy}`
    case 'mode_set_request':
      return `${s.from} sets the permission mode to ${s.mode}`
    case 'teammate_terminated':
      return `${s.name} terminated${s.message ? `: ${s.message}` : ''}`
    case 'spawn_request':
      return `${s.from} asks the leader to start ${s.name}${s.agentType ? ` (${s.agentType})` : ''} in-process`
    case 'lead_key_update':
      return `${s.from} hands out a new lead key`
    case 'compact_request':
      return `${s.from} asks to compact the conversation${s.focus ? ` (focus: ${s.focus})` : ''}`
    case 'budget_update':
      return s.scope === 'team'
        ? `${s.from} raised the team's budget`
        : `${s.from} raises the budget by ${[s.addUsd !== undefined ? `$${s.addUsd}` : '', s.addTokens !== undefined ? `${s.addTokens} tokens` : ''].filter(Boolean).join(' and ')}`
    case 'team_permission_update': {
      const u = s.permissionUpdate
      const rules = u.rules.map((r) => (r.ruleContent ? `${r.toolName}(${r.ruleContent})` : r.toolName)).join(', ')
      return `${u.behavior} ${rules}${s.directoryPath ? ` in ${s.directoryPath}` : ''}`
    }
  }
}

/** The `type` of a JSON object text that is not one of the known structured messages. */
function jsonType(text: string): string | undefined {
  if (!text.trimStart().startsWith('{')) return undefined
  try {
    const value = JSON.parse(text) as unknown
    const type = (value as { type?: unknown } | null)?.type
    return typeof type === 'string' ? type : undefined
  } catch {
    return undefined // plain text that starts with '{'
  }
}

/** A message of a type swarm does not know, on one line: its start, and the cut said (`swarm inbox --json` has it whole). */
function truncate(s: string, max: number): string {
  return clipped(s.replace(/\s+/g, ' '), max, 'swarm inbox --json')
}
