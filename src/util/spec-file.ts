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
  const checked = checkSpecText(text, schema, [], file.endsWith('.json'))
  if (!checked.ok) throw new CorruptFileError(file, checked.detail)
  return checked.data
}

/** The data of a spec file's text (YAML; a .json file read as JSON when it is), unchecked: CorruptFileError when it is neither. */
export function parseSpecData(file: string, text: string): unknown {
  const parsed = parseText(text, file.endsWith('.json'))
  if (!parsed.ok) throw new CorruptFileError(file, parsed.detail)
  return parsed.raw
}

type Checked<T> = { ok: true; data: T } | { ok: false; detail: string; hint?: string }

/**
 * `keys` are the format's own keys: an unknown key that differs from one of them only in case, `_`
 * or `-` (`agent_type`, `max-cost-usd`) is named with the right spelling.
 */
function checkSpecText<S extends z.ZodType>(text: string, schema: S, keys: readonly string[], json = false): Checked<z.output<S>> {
  const data = parseText(text, json)
  if (!data.ok) return data
  const parsed = schema.safeParse(data.raw ?? {})
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

function parseText(text: string, json: boolean): { ok: true; raw: unknown } | { ok: false; detail: string } {
  try {
    // A .json file is read as JSON when it is (YAML's parse costs tens of ms at a cold start), else as the YAML it may be.
    const asJson = json ? parseJson(text) : undefined
    return { ok: true, raw: asJson ? asJson.value : YAML.parse(text) }
  } catch (err) {
    return { ok: false, detail: `not valid YAML: ${(err as Error).message.split('\n')[0]}` }
  }
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined // not JSON: read as YAML, whose errors the message then names
  }
}

const spelling = (key: string) => key.toLowerCase().replace(/[-_]/g, '')
