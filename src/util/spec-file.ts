import fs from 'node:fs/promises'
import YAML from 'yaml'
import type { z } from 'zod'
import { CorruptFileError, NotFoundError } from '../errors.js'

/**
 * Reads a user-written YAML or JSON file (a team file, an adapter file) and validates it with
 * `schema`: a missing file is NotFoundError (exit 3), bad YAML or a wrong field a CorruptFileError
 * (exit 5) naming the file and the field. An empty file is `{}`.
 */
export async function readSpecFile<S extends z.ZodType>(file: string, schema: S, what: string): Promise<z.output<S>> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no ${what} ${file}`)
    throw err
  }
  return parseSpecText(file, text, schema)
}

/** The same check for text already read (an adapter file is hashed and parsed from one read). */
export function parseSpecText<S extends z.ZodType>(file: string, text: string, schema: S): z.output<S> {
  let raw: unknown
  try {
    raw = YAML.parse(text)
  } catch (err) {
    throw new CorruptFileError(file, `not valid YAML: ${(err as Error).message.split('\n')[0]}`)
  }
  const parsed = schema.safeParse(raw ?? {})
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new CorruptFileError(file, `${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return parsed.data
}
