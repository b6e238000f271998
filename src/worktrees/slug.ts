import { InvalidNameError } from '../errors.js'

const SLUG = /^[A-Za-z0-9._-]+$/
export const MAX_SLUG_LENGTH = 64

/**
 * A worktree's directory name under `<repo>/.claude/worktrees/`: at most 64 characters of
 * `[A-Za-z0-9._-]`, not `..` anywhere, not starting with `.` or `-` (hidden, or read as an option).
 * Anything else is refused before git runs (exit 2).
 */
export function validateSlug(slug: string): string {
  const fail = (why: string) => new InvalidNameError('worktree', slug, why)
  if (slug.length === 0) throw fail('it is empty')
  if (slug.length > MAX_SLUG_LENGTH) throw fail(`it is longer than ${MAX_SLUG_LENGTH} characters`)
  if (slug.includes('..')) throw fail('it contains ".."')
  if (slug.startsWith('/') || slug.includes('/') || slug.includes('\\')) throw fail('it is a path, not a name')
  if (!SLUG.test(slug)) throw fail('only A-Z a-z 0-9 . _ - are allowed')
  if (slug.startsWith('.') || slug.startsWith('-')) throw fail('it starts with "." or "-"')
  return slug
}

/** `<team>-<name>`, validated: past 64 characters together, the teammate needs an explicit slug. */
export function defaultSlug(team: string, name: string): string {
  return validateSlug(`${team}-${name}`)
}
