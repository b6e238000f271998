import { NotFoundError, UsageError } from '../errors.js'

/*
 * One id everywhere: a request is shown by its short id (the random tail of `perm-<time>-<hex>`,
 * `[7a2a0f]` at the console, in `swarm perms` and in notifications) and named by it, its full id
 * or a unique prefix of either, wherever an id is taken (`swarm perms approve|deny`, `/approve`,
 * `/deny`). Pure: the callers list the ids.
 */

/** The shortest prefix taken for an id (git's shortest abbreviation): a shorter word is never an id. */
export const MIN_ID_PREFIX = 4

/** The short id a request is shown by: the random tail of `perm-<time>-<hex>` (the whole id when it has no such tail). */
export function shortRequestId(id: string): string {
  return /-([0-9a-f]{4,})$/.exec(id)?.[1] ?? id
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
