import { ConflictError } from '../../errors.js'
import { readInbox } from '../../mailbox/inbox.js'
import { type MessageOf, parseStructured } from '../../mailbox/messages.js'
import type { InboxMessage } from '../../mailbox/types.js'
import { readMemberState } from '../../store/member-state.js'
import { LEAD_NAME, inboxPath } from '../../home/paths.js'
import type { TeamFile } from '../../teams/types.js'
import { type PendingRequest, readPending, readResolved, writePending } from '../../asks/store.js'
import { validateRequestId } from '../../home/request-id.js'

/**
 * Permission requests that exist only as a message in team-lead's inbox — Claude Code teammates
 * write no `pending/` file — are recorded as pending requests, so the broker has one queue.
 * Idempotent: a request already pending or resolved is left alone.
 */

/** Marks a pending record that swarm made from an inbox message (the requester writes none itself). */
export const INBOX_ORIGIN = 'inbox'

/**
 * The requester of an inbox request: the entry's sender, which must be a member of the team; a
 * request naming a different agent (bare name or `name@team`) is not one we record.
 */
function requester(config: TeamFile, entry: InboxMessage, req: MessageOf<'permission_request'>): string | undefined {
  const member = config.members.find((m) => m.name === entry.from && m.name !== LEAD_NAME)
  if (!member) return undefined
  const named = req.agent_id.includes('@') ? req.agent_id.slice(0, req.agent_id.lastIndexOf('@')) : req.agent_id
  return named === member.name ? member.name : undefined
}

/** Records one inbox `permission_request` as pending; returns the record when this call made it. */
export async function importInboxRequest(config: TeamFile, entry: InboxMessage, env?: NodeJS.ProcessEnv): Promise<PendingRequest | undefined> {
  const req = parseStructured(entry.text)
  if (req?.type !== 'permission_request') return undefined
  const agent = requester(config, entry, req)
  if (!agent) return undefined
  try {
    validateRequestId(req.request_id)
  } catch {
    return undefined // not a name we could store; the console shows the message as it is
  }
  if ((await readPending(config.name, req.request_id, env)) || (await readResolved(config.name, req.request_id, env))) return undefined
  const createdAt = Date.parse(entry.timestamp)
  const state = await readMemberState(config.name, agent, env).catch(() => undefined)
  try {
    return await writePending(
      config.name,
      {
        id: req.request_id,
        kind: 'permission',
        agent,
        agentId: `${agent}@${config.name}`,
        toolName: req.tool_name,
        toolUseId: req.tool_use_id,
        input: req.input,
        description: req.description,
        suggestions: req.permission_suggestions,
        createdAt: Number.isFinite(createdAt) ? createdAt : Date.now(),
        ...(typeof state?.pid === 'number' ? { pid: state.pid } : {}),
        origin: INBOX_ORIGIN,
      },
      env,
    )
  } catch (err) {
    if (err instanceof ConflictError) return undefined // another reader recorded it first
    throw err
  }
}

/** Records every inbox request of team-lead's inbox not yet known; returns the new ones. */
export async function importInboxRequests(config: TeamFile, env?: NodeJS.ProcessEnv): Promise<PendingRequest[]> {
  const entries = await readInbox(inboxPath(config.name, LEAD_NAME, env)).catch(() => [] as InboxMessage[])
  const made: PendingRequest[] = []
  for (const entry of entries) {
    if (!entry.text.includes('"permission_request"')) continue
    const record = await importInboxRequest(config, entry, env)
    if (record) made.push(record)
  }
  return made
}
