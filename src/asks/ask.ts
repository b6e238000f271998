/**
 * `ask`: how every member — swarm's agent, an agent CLI's hook — asks team-lead. The pending file
 * is the truth and the inbox message only a bell; one waiter (AnswerBoard) ends the wait, and an
 * "always" approval is kept in the one always store for the member that asked.
 */
import { errorMessage } from '../errors.js'
import { encodeStructured, type StructuredMessage } from '../mailbox/messages.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { LEAD_NAME, agentId } from '../home/paths.js'
import { newRequestId, shortRequestId } from '../home/request-id.js'
import { clipped } from '../terminal/clip.js'
import type { AnswerBoard } from './answer-board.js'
import { rememberAlways } from './always.js'
import { notifyTmuxClients } from './notify.js'
import { writePending } from './store.js'
import type { Answer, AskRequest, Asker } from './types.js'

/** What one member's requests share: who asks, where answers arrive, how long to wait. */
export interface AskContext {
  asker: Asker
  board: AnswerBoard
  /** Undefined: wait until answered, cancelled, aborted or orphaned. */
  timeoutMs?: number
  /** Show a tmux display-message to the clients attached to the team's session. */
  notifyTmux: boolean
  /** Requests of this member waiting now; it is `working` again when the last one ends. */
  waiting: { count: number }
}

export interface AskOptions {
  signal?: AbortSignal
  /** The id to ask under (default a new one): a PermissionRequest hook run before was told it. */
  id?: string
  /** Called once the request is durable in pending/, before team-lead is told. */
  onPending?: (id: string) => void | Promise<void>
}

/** A status detail and an inbox preview are one short line (`swarm status`'s column, a listing). */
const STATUS_MAX = 80
/** The member's own "asked team-lead" line: room for a usual command, the rest by `swarm perms show`. */
const ASKED_MAX = 240

/**
 * Asks team-lead and waits: the member shown as `waiting`, the durable pending record (so `swarm
 * perms` and a restarted leader see it even if the message is lost), then the inbox message and a
 * tmux notification; the answer (or the timeout, an abort, the asker orphaned) ends the wait.
 */
export async function ask(ctx: AskContext, req: AskRequest, options: AskOptions = {}): Promise<Answer> {
  const a = ctx.asker
  const signal = options.signal ?? new AbortController().signal
  const id = options.id ?? newRequestId(req.kind)
  const toolUseId = req.toolUseId ?? `call-${id}`
  const short = shortRequestId(id)
  const whole = `swarm perms show ${a.team} ${short}`
  const what = req.kind === 'plan' ? 'plan approval' : `${req.toolName} ${req.summary}`
  const answer = ctx.board.expect(id, req.kind, { signal, ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}) })
  ctx.waiting.count++
  try {
    // Waiting before the request is visible: whoever sees the request sees its member waiting.
    await a.setStatus('waiting', clipped(what, STATUS_MAX, whole))
    try {
      await writePending(
        a.team,
        {
          id,
          kind: req.kind,
          agent: a.name,
          agentId: agentId(a.name, a.team),
          toolName: req.toolName,
          toolUseId,
          input: req.input,
          description: req.description,
          suggestions: req.suggestions,
          createdAt: Date.now(),
          pid: process.pid,
          ...(req.planFilePath !== undefined ? { planFilePath: req.planFilePath } : {}),
        },
        a.env,
      )
    } catch (err) {
      // Nothing durable was written, so nobody could answer: give up at once instead of hanging.
      await ctx.board.cancel(id, `could not record the request: ${errorMessage(err)}`)
      await answer
      return { kind: 'cancelled', by: a.name, reason: `could not ask team-lead: ${errorMessage(err)}` }
    }
    await options.onPending?.(id)
    try {
      await sendTeamMessage({
        team: a.team,
        from: a.name,
        to: LEAD_NAME,
        text: encodeStructured(requestMessage(a.name, id, toolUseId, req)),
        summary: req.kind === 'plan' ? 'plan approval request' : clipped(`permission: ${req.toolName} ${req.summary}`, STATUS_MAX, whole),
        env: a.env,
      })
    } catch (err) {
      // The pending file is the durable truth: `swarm perms` and the leader still find the request.
      a.warn(`could not message team-lead (${errorMessage(err)}); the request stays listed in \`swarm perms ${a.team}\``)
    }
    if (ctx.notifyTmux)
      void notifyTmuxClients({ team: a.team, id, agent: a.name, toolName: req.toolName, kind: req.kind, summary: req.summary }, { env: a.env })
    a.info(`asked team-lead: ${clipped(what, ASKED_MAX, whole)} (request ${short}; \`swarm perms approve ${a.team} ${short}\`)`)
    const got = await answer
    if (got.kind === 'approve' && req.kind === 'permission' && (got.always || got.permissionUpdates?.length)) await keepAlways(a, got, req)
    return got
  } finally {
    ctx.waiting.count--
    if (ctx.waiting.count === 0 && !signal.aborted) await a.setStatus('working')
  }
}

/** The lead's inbox message for a request: the bell, in Claude Code's format. */
function requestMessage(from: string, id: string, toolUseId: string, req: AskRequest): StructuredMessage {
  if (req.kind === 'plan') {
    return {
      type: 'plan_approval_request',
      from,
      timestamp: new Date().toISOString(),
      planFilePath: req.planFilePath ?? '',
      planContent: typeof req.input.plan === 'string' ? req.input.plan : '',
      requestId: id,
    }
  }
  return {
    type: 'permission_request',
    request_id: id,
    // The bare name, as Claude Code writes it: a Claude Code lead drops `name@team`.
    agent_id: from,
    tool_name: req.toolName,
    tool_use_id: toolUseId,
    description: req.description,
    input: req.input,
    permission_suggestions: req.suggestions,
  }
}

/** An "always" approval: its rules (the lead's, else the request's suggestions) kept for the member. */
async function keepAlways(a: Asker, got: Extract<Answer, { kind: 'approve' }>, req: AskRequest): Promise<void> {
  try {
    const kept = await rememberAlways(
      { team: a.team, member: a.name },
      got.permissionUpdates?.length ? got.permissionUpdates : req.suggestions,
      a.env,
      a.checkRecord ? { check: a.checkRecord } : {},
    )
    a.info(`always allowed from now on: ${kept.join(', ') || req.toolName}`)
  } catch (err) {
    // The call itself was approved: only the rule for later calls is lost, and they are asked again.
    a.warn(`could not keep the "always" rule for ${req.toolName}: ${errorMessage(err)}`)
  }
}
