import fs from 'node:fs/promises'
import YAML from 'yaml'
import type { z } from 'zod'
import { CorruptFileError, NotFoundError, UsageError } from '../errors.js'

/**
 * Reads a user-written YAML or JSON file and validates it with `schema`, naming the file and the
 * key: a missing file is NotFoundError (exit 3); a file given on the command line (`--from`) that
 * is bad YAML or has a wrong or unknown key is a UsageError (exit 2). An empty file is `{}`.
 */
export async function readSpecFile<S extends z.ZodType>(file: string, schema: S, what: string, keys: readonly string[] = []): Promise<z.output<S>> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no ${what} ${file}`)
    throw err
  }
  const checked = checkSpecText(text, schema, keys)
  if (!checked.ok) throw new UsageError(`${file}: ${checked.detail}`, { hint: checked.hint ?? `fix the ${what}` })
  return checked.data
}

/** The same check for a file swarm finds itself (an adapter file, hashed and parsed from one read): a CorruptFileError (exit 5). */
export function parseSpecText<S extends z.ZodType>(file: string, text: string, schema: S): z.output<S> {
  const checked = checkSpecText(text, schema, [])
  if (!checked.ok) throw new CorruptFileError(file, checked.detail)
  return checked.data
}

type Checked<T> = { ok: true; data: T } | { ok: false; detail: string; hint?: string }

/**
 * `keys` are the format's own keys: an unknown key that differs from one of them only in case, `_`
 * or `-` (`agent_type`, `max-cost-usd`) is named with the right spelling.
 */
function checkSpecText<S extends z.ZodType>(text: string, schema: S, keys: readonly string[]): Checked<z.output<S>> {
  let raw: unknown
  try {
    raw = YAML.parse(text)
  } catch (err) {
    return { ok: false, detail: `not valid YAML: ${(err as Error).message.split('\n')[0]}` }
  }
  const parsed = schema.safeParse(raw ?? {})
  if (parsed.success) return { ok: true, data: parsed.data }
  const issue = parsed.error.issues[0]
  const where = issue.path.join('.') || '(top level)'
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]
    const right = keys.find((k) => spelling(k) === spelling(key))
    return right
      ? { ok: false, detail: `${where}: unknown key ${JSON.stringify(key)}: it is spelled ${right}`, hint: `rename ${key} to ${right}` }
      : { ok: false, detail: `${where}: unknown key ${JSON.stringify(key)}`, ...(keys.length ? { hint: `known keys: ${keys.join(', ')}` } : {}) }
  }
  return { ok: false, detail: `${where}: ${issue.message}` }
}

const spelling = (key: string) => key.toLowerCase().replace(/[-_]/g, '')
