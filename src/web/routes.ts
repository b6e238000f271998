import os from 'node:os'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { z } from 'zod'
import { ExitCode, NotFoundError, SwarmError } from '../errors.js'
import { LEAD_NAME, inboxPath, validateAgentName, validateName } from '../home/paths.js'
import { readInbox } from '../mailbox/inbox.js'
import { answerRequest } from '../permissions/requests/broker.js'
import type { GivenAnswer } from '../asks/types.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { readTeam } from '../teams/team-store.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { readJson, sendJson } from './http-util.js'
import { followMember } from './pane-view.js'
import { SseHub } from './sse.js'

/**
 * The API behind the page, one handler per route, each route a line of one table. The routes
 * that act — answering a request, sending a message — are in that table only when the server is
 * not read-only: a read-only server has no way to act, not a refusal. An answer goes through the
 * broker's answerRequest, as `swarm perms` and the leader console answer: exactly one answer
 * wins, and the record says it came from the web.
 */

export interface RouteContext {
  env: NodeJS.ProcessEnv
  /** One line per act, with its source: the server's log. */
  log(line: string): void
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, ctx: RouteContext) => Promise<void>

/** Who an answer from the web is recorded as: `<user> from the web`, what the console and `swarm perms` then name. */
export function webAnswerer(): string {
  let user = 'user'
  try {
    user = os.userInfo().username
  } catch {
    // no user entry (a container's uid): the generic name will do
  }
  return `${user} from the web`
}

const AnswerBody = z.strictObject({
  team: z.string(),
  id: z.string(),
  decision: z.enum(['approve', 'deny']),
  always: z.boolean().optional(),
  feedback: z.string().max(8_000).optional(),
})

const SendBody = z.strictObject({ team: z.string(), to: z.string(), text: z.string().min(1).max(32_000) })

async function answer(req: IncomingMessage, res: ServerResponse, _url: URL, ctx: RouteContext): Promise<void> {
  const body = await readJson(req, AnswerBody)
  validateName(body.team)
  const feedback = body.feedback?.trim() ? { feedback: body.feedback } : {}
  const given: GivenAnswer =
    body.decision === 'approve'
      ? { kind: 'approve', by: webAnswerer(), ...(body.always ? { always: true } : {}), ...feedback }
      : { kind: 'deny', by: webAnswerer(), ...feedback }
  const result = await answerRequest(body.team, body.id, given, { env: ctx.env })
  const r = result.request
  ctx.log(`${r.decision}${r.always ? ' always' : ''} ${r.agent}'s ${r.kind === 'plan' ? 'plan' : r.toolName} request ${r.id} — by ${r.resolvedBy}`)
  sendJson(res, 200, { id: r.id, decision: r.decision, always: r.always === true, by: r.resolvedBy, delivered: result.delivered })
}

/** A message from team-lead, as `swarm send` from the lead's shell sends it (signed as the lead). */
async function send(req: IncomingMessage, res: ServerResponse, _url: URL, ctx: RouteContext): Promise<void> {
  const body = await readJson(req, SendBody)
  validateName(body.team)
  const config = await readTeam(body.team, ctx.env)
  if (body.to !== '*' && !config.members.some((m) => m.name === body.to)) throw new NotFoundError(`no member ${body.to} in team ${body.team}`)
  const sent = await sendTeamMessage({ team: body.team, from: LEAD_NAME, to: body.to, text: body.text, env: ctx.env })
  ctx.log(one(`message from team-lead to ${body.to} in ${body.team} (${sent.length} sent) — from the web`))
  sendJson(res, 200, { sent: sent.length })
}

function teamAndName(url: URL): { team: string; name: string } {
  const team = validateName(url.searchParams.get('team') ?? '')
  const name = validateAgentName(url.searchParams.get('name') ?? '')
  return { team, name }
}

const one = (s: string) => terminalSafe(s, { singleLine: true })

/** A member's inbox, newest last: who, when, read or not, the text neutralised. */
async function inbox(_req: IncomingMessage, res: ServerResponse, url: URL, ctx: RouteContext): Promise<void> {
  const { team, name } = teamAndName(url)
  await readTeam(team, ctx.env)
  const messages = await readInbox(inboxPath(team, name, ctx.env))
  sendJson(res, 200, {
    messages: messages.slice(-100).map((m) => ({
      from: one(m.from),
      timestamp: one(m.timestamp),
      read: m.read === true,
      ...(m.summary ? { summary: one(m.summary) } : {}),
      text: terminalSafe(m.text),
    })),
  })
}

/** One stream per open viewer: the member's screen (or transcript), then what it prints (or the transcript again when it changes). */
function viewStream(hubs: Set<SseHub>): Handler {
  return async (req, res, url, ctx) => {
    const { team, name } = teamAndName(url)
    const source = url.searchParams.get('source') === 'transcript' ? 'transcript' : undefined
    const hub = new SseHub()
    const first: Array<{ event: string; data: unknown }> = []
    let open = false
    const emit = (event: string, data: unknown) => (open ? hub.send(event, data) : first.push({ event, data }))
    let follow: { close(): void } | undefined
    let gone = false
    req.on('close', () => {
      gone = true
      follow?.close()
      hub.close()
      hubs.delete(hub)
    })
    follow = await followMember(team, name, ctx.env, { view: (v) => emit('view', v), more: (text) => emit('more', { text }) }, source)
    if (gone) return follow.close()
    hubs.add(hub)
    const [head, ...rest] = first
    hub.add(res, head ?? { event: 'view', data: { source: 'pane', text: '' } })
    open = true
    for (const e of rest) hub.send(e.event, e.data)
  }
}

/** The routes: `METHOD path` → handler. The acting ones only when `readOnly` is false. */
export function apiRoutes(options: { readOnly: boolean; viewHubs: Set<SseHub> }): Map<string, Handler> {
  const routes = new Map<string, Handler>([
    ['GET /api/inbox', inbox],
    ['GET /api/view', viewStream(options.viewHubs)],
  ])
  if (!options.readOnly) {
    routes.set('POST /api/answer', answer)
    routes.set('POST /api/send', send)
  }
  return routes
}

/** An error as the page gets it: the status the CLI's exit code stands for, and the one-line message. */
export function errorStatus(err: unknown): number {
  const code = err instanceof SwarmError ? err.exitCode : undefined
  return code === ExitCode.usage ? 400 : code === ExitCode.notFound ? 404 : code === ExitCode.conflict ? 409 : 500
}
