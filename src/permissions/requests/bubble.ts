import { randomBytes } from 'node:crypto'
import type { AgentAssembly } from '../../agent/start.js'
import { errorMessage } from '../../errors.js'
import { encodeStructured, type StructuredMessage } from '../../mailbox/messages.js'
import { sendTeamMessage } from '../../teams/messaging.js'
import { LEAD_NAME, agentId } from '../../home/paths.js'
import type { Answer, AnswerBoard, RequestKind } from './answers.js'
import { notifyTmuxClients } from './notify.js'
import { writePending } from './store.js'
import { shortRequestId } from '../../home/request-id.js'
import { clipped } from '../../terminal/clip.js'

/** What one agent's requests share: who asks, where answers arrive, how long to wait. */
export interface BubbleContext {
  assembly: AgentAssembly
  board: AnswerBoard
  /** Undefined: wait until answered, cancelled or aborted. */
  timeoutMs?: number
  /** Show a tmux display-message to the clients attached to the team's session. */
  notifyTmux: boolean
  /** Requests of this agent waiting now; the agent is `working` again when the last one ends. */
  waiting: { count: number }
}

/** A request on its way to team-lead. */
export interface OutgoingRequest {
  id: string
  kind: RequestKind
  toolName: string
  toolUseId: string
  input: Record<string, unknown>
  description: string
  suggestions: unknown[]
  /** The inbox message to team-lead (permission_request or plan_approval_request). */
  message: StructuredMessage
  /** The whole input on one neutralised line: the status while waiting and notifications cut it, saying so. */
  summary: string
  /** Extra fields for the pending record (planFilePath). */
  extra?: Record<string, unknown>
}

/** A status detail and an inbox preview are one short line (`swarm status`'s column, a listing). */
const STATUS_MAX = 80
/** The teammate's own "asked team-lead" line: room for a usual command, the rest by `swarm perms show`. */
const ASKED_MAX = 240

/** `perm-lq2x3k-a1b2c3`: sortable by time, unique across processes, a valid file name. */
export function newRequestId(kind: RequestKind): string {
  return `${kind === 'plan' ? 'plan' : 'perm'}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
}

/**
 * Asks team-lead and waits: the durable pending record first (so `swarm perms` and a restarted
 * leader see it even if the message is lost), then the inbox message, a tmux notification, and
 * the agent shown as `waiting` until the answer (or the timeout, or an abort) ends the wait.
 */
export async function bubble(ctx: BubbleContext, req: OutgoingRequest, signal: AbortSignal): Promise<Answer> {
  const a = ctx.assembly
  const short = shortRequestId(req.id)
  const whole = `swarm perms show ${a.team} ${short}`
  const what = req.kind === 'plan' ? 'plan approval' : `${req.toolName} ${req.summary}`
  const answer = ctx.board.expect(req.id, req.kind, { signal, ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}) })
  ctx.waiting.count++
  try {
    // Waiting before the request is visible: whoever sees the request sees its teammate waiting.
    await a.setStatus('waiting', clipped(what, STATUS_MAX, whole))
    try {
      await writePending(
        a.team,
        {
          id: req.id,
          kind: req.kind,
          agent: a.name,
          agentId: agentId(a.name, a.team),
          toolName: req.toolName,
          toolUseId: req.toolUseId,
          input: req.input,
          description: req.description,
          suggestions: req.suggestions,
          createdAt: Date.now(),
          pid: process.pid,
          ...req.extra,
        },
        a.env,
      )
    } catch (err) {
      // Nothing durable was written, so nobody could answer: give up at once instead of hanging.
      await ctx.board.cancel(req.id, `could not record the request: ${errorMessage(err)}`)
      await answer
      return { kind: 'cancelled', by: a.name, reason: `could not ask team-lead: ${errorMessage(err)}` }
    }
    try {
      await sendTeamMessage({
        team: a.team,
        from: a.name,
        to: LEAD_NAME,
        text: encodeStructured(req.message),
        summary: req.kind === 'plan' ? 'plan approval request' : clipped(`permission: ${req.toolName} ${req.summary}`, STATUS_MAX, whole),
        env: a.env,
      })
    } catch (err) {
      // The pending file is the durable truth: `swarm perms` and the leader still find the request.
      a.output.warn(`could not message team-lead (${errorMessage(err)}); the request stays listed in \`swarm perms ${a.team}\``)
    }
    if (ctx.notifyTmux)
      void notifyTmuxClients(
        { team: a.team, id: req.id, agent: a.name, toolName: req.toolName, kind: req.kind, summary: req.summary },
        { env: a.env },
      )
    a.output.info(`asked team-lead: ${clipped(what, ASKED_MAX, whole)} (request ${short}; \`swarm perms approve ${a.team} ${short}\`)`)
    return await answer
  } finally {
    ctx.waiting.count--
    if (ctx.waiting.count === 0 && !signal.aborted) await a.setStatus('working')
  }
}
