import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { ConflictError, CorruptFileError, NotFoundError } from '../errors.js'
import { pendingPermissionsDir, resolvedPermissionsDir } from '../home/paths.js'
import { FILE_MODE, ensureDir, moveAside, parseJsonFile, readFileIfExists } from '../util/fs.js'
import { pidExists, sightProcess } from '../process/liveness.js'
import { isRequestId, matchRequestId, validateRequestId } from '../home/request-id.js'

/**
 * Durable permission and plan requests: `permissions/pending/<id>.json` while a teammate waits,
 * `permissions/resolved/<id>.json` once answered. Both are created with link(), which fails when
 * the name exists, so a request is written once and resolved exactly once, across processes.
 */

export const PendingRequest = z.looseObject({
  id: z.string(),
  kind: z.enum(['permission', 'plan']),
  /** The teammate's name and agent id (`name@team`). */
  agent: z.string(),
  agentId: z.string(),
  toolName: z.string(),
  toolUseId: z.string(),
  input: z.record(z.string(), z.unknown()),
  description: z.string(),
  /** Claude Code permission updates or rule strings such as `Bash(npm test:*)`. */
  suggestions: z.array(z.unknown()).default([]),
  /** ms since the epoch. */
  createdAt: z.number(),
  /** The waiting process, for cancelling requests of dead teammates. */
  pid: z.number().int().optional(),
  /** When `pid` started and the pid namespace it was seen from (set by writePending): a sweep cancels only a sure death. */
  pidStarted: z.string().optional(),
  pidNs: z.string().optional(),
  status: z.string().optional(),
})
export type PendingRequest = z.infer<typeof PendingRequest>
export type NewPendingRequest = z.input<typeof PendingRequest>

export const Decision = z.enum(['approve', 'deny', 'cancelled'])
export type Decision = z.infer<typeof Decision>

export const ResolvedRequest = PendingRequest.extend({
  decision: Decision,
  /** Approve always: the caller adds the suggested rule. */
  always: z.boolean().optional(),
  feedback: z.string().optional(),
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  resolvedBy: z.string(),
  resolvedAt: z.number(),
  /** team-lead's seal over the record (trust/record-seal): a teammate cannot make an answer that verifies. */
  leadSeal: z.string().optional(),
})
export type ResolvedRequest = z.infer<typeof ResolvedRequest>

/**
 * Seals a record the lead writes as a file (trust/record-seal `recordSealer`, bound to the team):
 * the value goes into its `leadSeal`. Given by the lead's side only.
 */
export type LeadRecordSeal = (kind: 'resolved' | 'always', body: Record<string, unknown>) => string
/**
 * Whether a record's `leadSeal` is the lead's (the member's key, following rotation). Absent:
 * nothing is sealed in this team (a Claude Code lead's), every record counts as it is.
 */
export type LeadRecordCheck = (kind: 'resolved' | 'always', record: Record<string, unknown>) => boolean | Promise<boolean>

export interface Resolution {
  decision: Decision
  resolvedBy: string
  always?: boolean
  feedback?: string
  updatedInput?: Record<string, unknown>
  /** The lead's seal: its answers are sealed, so a member can tell them from a teammate's forgery. */
  seal?: LeadRecordSeal
}

function pendingPath(team: string, id: string, env?: NodeJS.ProcessEnv): string {
  return path.join(pendingPermissionsDir(team, env), `${validateRequestId(id)}.json`)
}
function resolvedPath(team: string, id: string, env?: NodeJS.ProcessEnv): string {
  return path.join(resolvedPermissionsDir(team, env), `${validateRequestId(id)}.json`)
}

/**
 * Writes `file` only if it does not exist yet: content goes to a temp file first, then link()
 * gives it its name atomically. Returns false when the name was taken.
 */
async function createExclusive(file: string, value: unknown): Promise<boolean> {
  await ensureDir(path.dirname(file))
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  await fs.writeFile(tmp, JSON.stringify(value, null, 2) + '\n', { flag: 'wx', mode: FILE_MODE })
  try {
    await fs.link(tmp, file)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  } finally {
    await fs.rm(tmp, { force: true })
  }
}

/** Records a new pending request. ConflictError when the id is already pending or resolved. */
export async function writePending(team: string, request: NewPendingRequest, env?: NodeJS.ProcessEnv): Promise<PendingRequest> {
  const parsed = PendingRequest.parse(request)
  const seen = parsed.pid !== undefined && parsed.pidStarted === undefined ? sightProcess(parsed.pid) : undefined
  if (seen) Object.assign(parsed, { pidStarted: seen.started, pidNs: seen.pidNs })
  if ((await readFileIfExists(resolvedPath(team, parsed.id, env))) !== undefined) {
    throw new ConflictError('SWARM_REQUEST_EXISTS', `request ${parsed.id} was already resolved`)
  }
  if (!(await createExclusive(pendingPath(team, parsed.id, env), parsed))) {
    throw new ConflictError('SWARM_REQUEST_EXISTS', `request ${parsed.id} is already pending`)
  }
  return parsed
}

/** A pending request; undefined when there is none (never written, or resolved since). */
export async function readPending(team: string, id: string, env?: NodeJS.ProcessEnv): Promise<PendingRequest | undefined> {
  const file = pendingPath(team, id, env)
  const text = await readFileIfExists(file)
  return text === undefined ? undefined : parseJsonFile(file, text, PendingRequest)
}

/** A resolved request; undefined while it is still pending or unknown. */
export async function readResolved(team: string, id: string, env?: NodeJS.ProcessEnv): Promise<ResolvedRequest | undefined> {
  const file = resolvedPath(team, id, env)
  const text = await readFileIfExists(file)
  return text === undefined ? undefined : parseJsonFile(file, text, ResolvedRequest)
}

export interface ListedRequest extends PendingRequest {
  ageMs: number
}

/**
 * Every pending request, oldest first, with its age. A pending file whose request was resolved
 * (a resolver that died between its two steps) is removed; a file that does not parse is moved
 * aside and reported in `problems`, never deleted.
 */
export async function listPending(
  team: string,
  options: { env?: NodeJS.ProcessEnv; now?: number } = {},
): Promise<{ requests: ListedRequest[]; problems: CorruptFileError[] }> {
  const dir = pendingPermissionsDir(team, options.env)
  const now = options.now ?? Date.now()
  const requests: ListedRequest[] = []
  const problems: CorruptFileError[] = []
  for (const name of await listJsonFiles(dir)) {
    const id = name.slice(0, -'.json'.length)
    if (!isRequestId(id)) continue
    const file = path.join(dir, name)
    if ((await readFileIfExists(resolvedPath(team, id, options.env))) !== undefined) {
      await fs.rm(file, { force: true })
      continue
    }
    const text = await readFileIfExists(file)
    if (text === undefined) continue // resolved meanwhile
    try {
      const request = parseJsonFile(file, text, PendingRequest)
      requests.push({ ...request, ageMs: Math.max(0, now - request.createdAt) })
    } catch (err) {
      if (!(err instanceof CorruptFileError)) throw err
      const movedTo = await moveAside(file).catch(() => undefined)
      problems.push(new CorruptFileError(file, err.message.replace(/^corrupt file \S+ \((.*)\)$/s, '$1'), { movedTo, cause: err }))
    }
  }
  requests.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
  return { requests, problems }
}

/**
 * The full id of the request `query` names (its id, short id or a unique prefix: request-id.ts),
 * looked up among the pending requests, then among the answered ones (so that answering one
 * twice by its short id says who answered it). NotFoundError (exit 3); UsageError when ambiguous.
 */
export async function resolveRequestId(team: string, query: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const where = `in team ${team}`
  for (const dir of [pendingPermissionsDir(team, env), resolvedPermissionsDir(team, env)]) {
    const ids = (await listJsonFiles(dir)).map((n) => n.slice(0, -'.json'.length)).filter(isRequestId)
    try {
      return matchRequestId(query, ids, where)
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err
    }
  }
  throw new NotFoundError(`no pending request ${query} ${where}`, { hint: `list them with \`swarm perms ${team}\`` })
}

async function listJsonFiles(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

/**
 * Answers a pending request. Exactly one of several racing resolvers (processes included) wins:
 * the resolved file is created with link(), which fails for all but the first. The losers get a
 * ConflictError('SWARM_ALREADY_RESOLVED') naming the earlier decision; an unknown id is a
 * NotFoundError.
 */
export async function resolveRequest(team: string, id: string, resolution: Resolution, env?: NodeJS.ProcessEnv): Promise<ResolvedRequest> {
  const pending = await readPending(team, id, env)
  if (pending === undefined) {
    const earlier = await readResolved(team, id, env)
    if (earlier) throw alreadyResolved(earlier)
    throw new NotFoundError(`no pending request ${id} in team ${team}`, { hint: 'list pending requests with `swarm perms <team>`' })
  }
  const { leadSeal: _old, ...fields } = pending as PendingRequest & { leadSeal?: unknown }
  const unsealed = ResolvedRequest.parse({
    ...fields,
    decision: resolution.decision,
    ...(resolution.always !== undefined && { always: resolution.always }),
    ...(resolution.feedback !== undefined && { feedback: resolution.feedback }),
    ...(resolution.updatedInput !== undefined && { updatedInput: resolution.updatedInput }),
    resolvedBy: resolution.resolvedBy,
    resolvedAt: Date.now(),
  })
  const record = resolution.seal ? { ...unsealed, leadSeal: resolution.seal('resolved', unsealed) } : unsealed
  if (!(await createExclusive(resolvedPath(team, id, env), record))) {
    const earlier = await readResolved(team, id, env)
    throw earlier ? alreadyResolved(earlier) : new ConflictError('SWARM_ALREADY_RESOLVED', `request ${id} was already resolved`)
  }
  await fs.rm(pendingPath(team, id, env), { force: true })
  return record
}

/**
 * Records an answer made on another machine as it was made (the team's relay, remote/relay.ts):
 * `record` verbatim — the lead's seal over it kept, so the asker's own check (answer-board.ts)
 * verifies it — in place of the pending request of its id, by the same one-winner rule as
 * resolveRequest (ConflictError when answered already, NotFoundError when never asked here).
 */
export async function recordResolved(team: string, record: ResolvedRequest, env?: NodeJS.ProcessEnv): Promise<void> {
  ResolvedRequest.parse(record)
  if ((await readPending(team, record.id, env)) === undefined) {
    const earlier = await readResolved(team, record.id, env)
    if (earlier) throw alreadyResolved(earlier)
    throw new NotFoundError(`no pending request ${record.id} in team ${team}`)
  }
  if (!(await createExclusive(resolvedPath(team, record.id, env), record))) {
    const earlier = await readResolved(team, record.id, env)
    throw earlier ? alreadyResolved(earlier) : new ConflictError('SWARM_ALREADY_RESOLVED', `request ${record.id} was already resolved`)
  }
  await fs.rm(pendingPath(team, record.id, env), { force: true })
}

function alreadyResolved(earlier: ResolvedRequest): ConflictError {
  return new ConflictError('SWARM_ALREADY_RESOLVED', `request ${earlier.id} was already resolved (${earlier.decision} by ${earlier.resolvedBy})`)
}

/** Withdraws a request (its teammate died, or stopped waiting): resolved as cancelled. */
export async function cancelRequest(team: string, id: string, reason: string, resolvedBy: string, env?: NodeJS.ProcessEnv): Promise<ResolvedRequest> {
  return resolveRequest(team, id, { decision: 'cancelled', feedback: reason, resolvedBy }, env)
}

/**
 * Cancels every pending request whose teammate is dead according to `isAlive`. Requests that
 * someone else resolved meanwhile are skipped. Returns the cancelled records.
 */
export async function cancelDeadRequests(
  team: string,
  isAlive: (request: PendingRequest) => boolean | Promise<boolean>,
  options: { env?: NodeJS.ProcessEnv; resolvedBy?: string } = {},
): Promise<ResolvedRequest[]> {
  const { requests } = await listPending(team, { env: options.env })
  const cancelled: ResolvedRequest[] = []
  for (const request of requests) {
    if (await isAlive(request)) continue
    try {
      cancelled.push(await cancelRequest(team, request.id, `${request.agent} is no longer running`, options.resolvedBy ?? 'swarm', options.env))
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) continue // answered meanwhile
      throw err
    }
  }
  return cancelled
}

/**
 * Requests cancelled by `resolvedBy` (swarm cancels those of dead teammates) at or after `since`,
 * oldest first: whoever cleared them (the leader console's sweep, another shell), a listing can
 * still say so. Only recently written resolved files are read; unreadable ones are skipped.
 */
export async function cancelledSince(
  team: string,
  since: number,
  options: { env?: NodeJS.ProcessEnv; resolvedBy?: string } = {},
): Promise<ResolvedRequest[]> {
  const dir = resolvedPermissionsDir(team, options.env)
  const found: ResolvedRequest[] = []
  for (const name of await listJsonFiles(dir)) {
    const file = path.join(dir, name)
    const stat = await fs.stat(file).catch(() => undefined)
    if (!stat || stat.mtimeMs < since) continue
    const r = parseResolved(await readFileIfExists(file))
    if (r?.decision === 'cancelled' && r.resolvedAt >= since && (options.resolvedBy === undefined || r.resolvedBy === options.resolvedBy))
      found.push(r)
  }
  return found.sort((a, b) => a.resolvedAt - b.resolvedAt || a.id.localeCompare(b.id))
}

/** A resolved record, or undefined for a torn or foreign file (no cancellation to report). */
function parseResolved(text: string | undefined): ResolvedRequest | undefined {
  if (text === undefined) return undefined
  try {
    const r = ResolvedRequest.safeParse(JSON.parse(text))
    return r.success ? r.data : undefined
  } catch {
    return undefined
  }
}

/** True when process `pid` exists (EPERM: it exists but belongs to someone else). */
export function isPidAlive(pid: number): boolean {
  return pidExists(pid) // 0 and negatives (process groups) are never alive
}
