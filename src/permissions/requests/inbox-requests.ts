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
 * Permission and plan approval requests that exist only as a message in team-lead's inbox — Claude
 * Code teammates write no `pending/` file — are recorded as pending requests, so the broker has one
 * queue (the console, `swarm perms`, `status`). Idempotent: a request already pending or resolved is
 * left alone. A plan request keeps its `planContent` byte for byte as `input.plan`: the answer's
 * `planDigest` is computed from it (mailbox/answer-binding.ts).
 */

/** Marks a pending record that swarm made from an inbox message (the requester writes none itself). */
export const INBOX_ORIGIN = 'inbox'

/**
 * The requester of an inbox request: the entry's sender, which must be a member of the team; a
 * request naming a different agent (bare name or `name@team`) is not one we record.
 */
function requester(config: TeamFile, entry: InboxMessage, claimed: string): string | undefined {
  const member = config.members.find((m) => m.name === entry.from && m.name !== LEAD_NAME)
  if (!member) return undefined
  const named = claimed.includes('@') ? claimed.slice(0, claimed.lastIndexOf('@')) : claimed
  return named === member.name ? member.name : undefined
}

type InboxAsk = MessageOf<'permission_request'> | MessageOf<'plan_approval_request'>

/** What the pending record holds of one inbox request, in the shape swarm's own asks write. */
function recordOf(req: InboxAsk): Pick<PendingRequest, 'id' | 'kind' | 'toolName' | 'toolUseId' | 'input' | 'description' | 'suggestions'> & {
  claimed: string
  planFilePath?: string
} {
  if (req.type === 'plan_approval_request') {
    const first = req.planContent.split('\n').find((l) => l.trim()) ?? ''
    return {
      id: req.requestId,
      kind: 'plan',
      claimed: req.from,
      toolName: 'ExitPlanMode',
      toolUseId: `call-${req.requestId}`,
      input: { plan: req.planContent },
      description: `plan: ${first.trim().slice(0, 100)}`,
      suggestions: [],
      planFilePath: req.planFilePath,
    }
  }
  return {
    id: req.request_id,
    kind: 'permission',
    claimed: req.agent_id,
    toolName: req.tool_name,
    toolUseId: req.tool_use_id,
    input: req.input,
    description: req.description,
    suggestions: req.permission_suggestions,
  }
}

/** Records one inbox `permission_request` or `plan_approval_request` as pending; returns the record when this call made it. */
export async function importInboxRequest(config: TeamFile, entry: InboxMessage, env?: NodeJS.ProcessEnv): Promise<PendingRequest | undefined> {
  const req = parseStructured(entry.text)
  if (req?.type !== 'permission_request' && req?.type !== 'plan_approval_request') return undefined
  const { claimed, ...record } = recordOf(req)
  const agent = requester(config, entry, claimed)
  if (!agent) return undefined
  try {
    validateRequestId(record.id)
  } catch {
    return undefined // not a name we could store; the console shows the message as it is
  }
  if ((await readPending(config.name, record.id, env)) || (await readResolved(config.name, record.id, env))) return undefined
  const createdAt = Date.parse(entry.timestamp)
  const state = await readMemberState(config.name, agent, env).catch(() => undefined)
  try {
    return await writePending(
      config.name,
      {
        ...record,
        agent,
        agentId: `${agent}@${config.name}`,
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
    if (!entry.text.includes('"permission_request"') && !entry.text.includes('"plan_approval_request"')) continue
    const record = await importInboxRequest(config, entry, env)
    if (record) made.push(record)
  }
  return made
}
