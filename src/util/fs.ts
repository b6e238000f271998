import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { z } from 'zod'
import { CorruptFileError } from '../errors.js'

export const DIR_MODE = 0o700
export const FILE_MODE = 0o600

/** mkdir -p with 0700 for every directory it creates. */
export async function ensureDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: DIR_MODE })
}

/**
 * Writes `data` to a temp file in the same directory and renames it over `file`,
 * so a crash never leaves a torn file. The file gets mode 0600.
 */
export async function atomicWriteFile(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file)
  await ensureDir(dir)
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  const handle = await fs.open(tmp, 'w', FILE_MODE)
  try {
    await handle.writeFile(data)
  } finally {
    await handle.close()
  }
  try {
    await fs.rename(tmp, file)
  } catch (err) {
    await fs.rm(tmp, { force: true })
    throw err
  }
}

export async function atomicWriteJson(file: string, value: unknown): Promise<void> {
  await atomicWriteFile(file, JSON.stringify(value, null, 2) + '\n')
}

export async function pathExists(p: string): Promise<boolean> {
  try {
    await fs.access(p)
    return true
  } catch {
    return false
  }
}

/** Reads a file; undefined when it does not exist. */
export async function readFileIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/**
 * Parses `text` (the contents of `file`) as JSON and validates it with `schema`.
 * Throws CorruptFileError naming the file when either fails.
 */
export function parseJsonFile<S extends z.ZodType>(file: string, text: string, schema: S): z.infer<S> {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new CorruptFileError(file, `not valid JSON: ${(err as Error).message}`)
  }
  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.length ? issue.path.join('.') : '(root)'
    throw new CorruptFileError(file, `${where}: ${issue?.message ?? 'does not match the schema'}`)
  }
  return parsed.data
}

/** Reads and validates a JSON file; undefined when the file does not exist. */
export async function readJsonFile<S extends z.ZodType>(file: string, schema: S): Promise<z.infer<S> | undefined> {
  const text = await readFileIfExists(file)
  if (text === undefined) return undefined
  return parseJsonFile(file, text, schema)
}

/**
 * Moves a file that does not parse out of the way (`<file>.corrupt-<timestamp>`), never deleting it.
 * Returns where it went.
 */
export async function moveAside(file: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  let target = `${file}.corrupt-${stamp}`
  for (let i = 1; await pathExists(target); i++) target = `${file}.corrupt-${stamp}-${i}`
  await fs.rename(file, target)
  return target
}

/**
 * For writers: reads and validates `file`; when it is corrupt, moves it aside and throws a
 * CorruptFileError that says where it went (the caller decides whether to start afresh).
 */
export async function readJsonForWrite<S extends z.ZodType>(file: string, schema: S): Promise<z.infer<S> | undefined> {
  try {
    return await readJsonFile(file, schema)
  } catch (err) {
    if (!(err instanceof CorruptFileError)) throw err
    const movedTo = await moveAside(file)
    throw new CorruptFileError(file, err.message.replace(/^corrupt file \S+ \((.*)\)$/, '$1'), { movedTo, cause: err })
  }
}
