import { randomBytes } from 'node:crypto'
import { NotFoundError, UsageError } from '../errors.js'

/*
 * One id everywhere: a request is shown by its short id (the random tail of `perm-<time>-<hex>`,
 * `[7a2a0f]` at the console, in `swarm perms` and in notifications) and named by it, its full id
 * or a unique prefix of either, wherever an id is taken (`swarm perms approve|deny`, `/approve`,
 * `/deny`). Made here (newRequestId) and checked here (validateRequestId) for every asker. Pure:
 * the callers list the ids.
 */

/** `perm-lq2x3k-a1b2c3`: sortable by time, unique across processes, a valid file name. */
export function newRequestId(kind: 'permission' | 'plan'): string {
  return `${kind === 'plan' ? 'plan' : 'perm'}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
}

/** `@` too: Claude Code names plan requests `plan_approval-<ms>@<name>@<team>`. */
const ID_RE = /^[A-Za-z0-9_][A-Za-z0-9._@-]{0,127}$/

/** Whether `id` may name a request (it becomes a file name). */
export function isRequestId(id: string): boolean {
  return typeof id === 'string' && ID_RE.test(id)
}

/** Request ids become file names: 1–128 of A-Z a-z 0-9 . _ @ -, not starting with . @ or -. UsageError otherwise. */
export function validateRequestId(id: string): string {
  if (!isRequestId(id)) {
    throw new UsageError(`invalid request id ${JSON.stringify(id)}`, { hint: 'ids are 1-128 characters of A-Z a-z 0-9 . _ @ - (see `swarm perms`)' })
  }
  return id
}

/** The shortest prefix taken for an id (git's shortest abbreviation): a shorter word is never an id. */
export const MIN_ID_PREFIX = 4

/**
 * The short id a request is shown by: the random tail of `perm-<time>-<hex>`; of Claude Code's
 * `plan_approval-<ms>@<name>@<team>`, the last six digits of its time; else the whole id.
 */
export function shortRequestId(id: string): string {
  return /-([0-9a-f]{4,})$/.exec(id)?.[1] ?? /^[a-z_]+-\d*(\d{6})@/.exec(id)?.[1] ?? id
}

/**
 * The one id of `ids` that `query` names: the id itself, its short id, or a prefix of at least
 * MIN_ID_PREFIX characters of either. NotFoundError (exit 3) when none; UsageError (exit 2) naming
 * every candidate when several — an ambiguous id must never pick a request.
 */
export function matchRequestId(query: string, ids: Iterable<string>, where: string): string {
  const all = [...ids]
  if (all.includes(query)) return query
  const short = all.filter((id) => shortRequestId(id) === query)
  const matches = short.length
    ? short
    : query.length < MIN_ID_PREFIX
      ? []
      : all.filter((id) => id.startsWith(query) || shortRequestId(id).startsWith(query))
  if (matches.length === 1) return matches[0]
  if (matches.length === 0) throw new NotFoundError(`no pending request ${query} ${where}`)
  throw new UsageError(`request id ${query} is ambiguous ${where}: ${matches.map((id) => `${shortRequestId(id)} (${id})`).join(', ')}`, {
    hint: 'give more of the id',
  })
}
