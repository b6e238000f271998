/**
 * What a tool call is told of an answer, the same for every member: swarm's agent hands it to
 * its tool loop, an agent CLI's hook to its adapter's reply. Pure.
 */
import type { Answer, Verdict } from './types.js'

/** allow (with the lead's edited input) or deny: the lead's feedback (else who denied it), or why the request was withdrawn. */
export function verdictOf(answer: Answer): Verdict {
  if (answer.kind === 'cancelled') return { behavior: 'deny', message: `the request was cancelled: ${answer.reason}` }
  if (answer.kind === 'deny') return { behavior: 'deny', message: answer.feedback || `denied by ${answer.by}` }
  return { behavior: 'allow', ...(answer.updatedInput ? { updatedInput: answer.updatedInput } : {}) }
}
