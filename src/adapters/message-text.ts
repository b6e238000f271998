/**
 * How inbox messages read in a CLI's prompt: each `[message from <name>] <text>`, a batch joined by
 * blank lines. Structured messages are turned into sentences, or left out when they are control
 * traffic the CLI has no use for (permission answers reach the waiting hook through the broker).
 */
import { parseStructured } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'

export type Classified = { kind: 'text'; text: string } | { kind: 'shutdown'; requestId: string } | { kind: 'skip' }

export function classifyMessage(m: InboxMessage): Classified {
  const s = parseStructured(m.text)
  if (!s) return { kind: 'text', text: `[message from ${m.from}] ${m.text}` }
  switch (s.type) {
    case 'shutdown_request':
      return { kind: 'shutdown', requestId: s.requestId }
    case 'task_assignment':
      return { kind: 'text', text: `[message from ${m.from}] task #${s.taskId} is assigned to you: ${s.subject}\n${s.description}` }
    case 'teammate_terminated':
      return { kind: 'text', text: `[message from ${m.from}] ${JSON.stringify(s)}` }
    default:
      // permission/plan answers, idle notifications, mode and spawn requests: not for the CLI's model
      return { kind: 'skip' }
  }
}

/** One prompt for a batch of message texts. */
export function batchText(texts: string[]): string {
  return texts.join('\n\n')
}
