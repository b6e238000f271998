import { randomBytes } from 'node:crypto'
import fsSync, { constants as fsConstants } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { z } from 'zod'
import { CorruptFileError } from '../errors.js'
import { explainErrno, isSymlinkRefusal, symlinkRefused } from './fs-errors.js'
import { LockLostError, assertFencesHeld } from './lock-fence.js'

export const DIR_MODE = 0o700
export const FILE_MODE = 0o600

/**
 * mkdir -p with 0700 for every directory it creates. Node's recursive mkdir reports ENOENT when a
 * parent cannot be made (a read-only or full disk): the first missing directory is then made on
 * its own, so that the real reason (EROFS, ENOSPC, EACCES) is what the caller sees.
 */
export async function ensureDir(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    let missing = path.resolve(dir)
    while (!(await pathExists(path.dirname(missing))) && path.dirname(missing) !== missing) missing = path.dirname(missing)
    await fs.mkdir(missing, { mode: DIR_MODE }).catch((real: NodeJS.ErrnoException) => {
      if (real.code !== 'EEXIST') throw real // the real reason
    })
    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE }) // made meanwhile (a race): go on
  }
}

/** open(2) flags that never follow a symbolic link in the last component (files swarm appends to or rewrites). */
export const NOFOLLOW = {
  append: fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW,
  readAppend: fsConstants.O_RDWR | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW,
  readWrite: fsConstants.O_RDWR | fsConstants.O_NOFOLLOW,
  read: fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW,
} as const

/** An error of opening `file` with NOFOLLOW flags: a symbolic link there (ELOOP) is a CorruptFileError (exit 5). */
export function openError(file: string, err: unknown): unknown {
  withPath(err, file)
  return (err as NodeJS.ErrnoException).code === 'ELOOP' ? (explainErrno(err, file) ?? err) : err
}

/** Opens `file` with NOFOLLOW flags; a symbolic link there is refused (openError). */
export async function openNoFollow(file: string, flags: number): Promise<fs.FileHandle> {
  try {
    return await fs.open(file, flags, FILE_MODE)
  } catch (err) {
    throw openError(file, err)
  }
}

/** Strict UTF-8: bytes that are not valid UTF-8 are a CorruptFileError naming the file, never U+FFFD. */
export function decodeUtf8(file: string, bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    throw new CorruptFileError(file, 'not valid UTF-8')
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Writes `data` to a temp file in the same directory and renames it over `file`,
 * so a crash never leaves a torn file. The file gets mode 0600. A symbolic link at `file` is
 * refused (symlinkRefused, exit 5) and left as it is: rename(2) would replace it.
 */
export async function atomicWriteFile(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file)
  await ensureDir(dir)
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    const handle = await fs.open(tmp, 'wx', FILE_MODE)
    try {
      await handle.writeFile(data)
    } finally {
      await handle.close()
    }
    await refuseSymlink(file)
    assertFencesHeld() // under withFileLock: a holder that lost its lock while stopped commits nothing
    await fs.rename(tmp, file)
  } catch (err) {
    await fs.rm(tmp, { force: true })
    if (err instanceof LockLostError) throw err
    throw withPath(err, file, tmp) // a failed write(2) (ENOSPC) names no path
  }
}

/** Throws symlinkRefused when `file` is a symbolic link (lstat: the link itself, never its target). */
export async function refuseSymlink(file: string): Promise<void> {
  const st = await fs.lstat(file).catch(() => undefined)
  if (st?.isSymbolicLink()) throw symlinkRefused(file)
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

/** How a reader treats a symbolic link: followed (a user's settings may be one), or refused (swarm's own state files). */
export interface ReadOptions {
  /** Open with O_NOFOLLOW: a link is a CorruptFileError (symlinkRefused, exit 5), left as it is. */
  noFollow?: boolean
}

/** For swarm's own state files (inboxes, tasks, config.json): a symbolic link is refused, never followed. */
export const OWN_FILE: ReadOptions = { noFollow: true }

/**
 * Reads a file as strict UTF-8 (decodeUtf8); undefined when it does not exist. Errors name the
 * file (a directory in its place fails with EISDIR, which names none).
 */
export async function readFileIfExists(file: string, opts: ReadOptions = {}): Promise<string | undefined> {
  let bytes: Buffer
  try {
    const handle = await fs.open(file, opts.noFollow ? NOFOLLOW.read : fsConstants.O_RDONLY)
    try {
      bytes = await handle.readFile()
    } finally {
      await handle.close()
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw openError(file, err)
  }
  return decodeUtf8(file, bytes)
}

/**
 * Sets `path` on an errno error that has none (a failed read(2) or write(2)), or that names `tmp`
 * (the temp file of an atomic write), so that its report names the file meant.
 */
export function withPath(err: unknown, file: string, tmp?: string): unknown {
  const e = err as NodeJS.ErrnoException
  if (e && typeof e === 'object' && typeof e.code === 'string' && (e.path === undefined || e.path === tmp)) e.path = file
  return err
}

/**
 * Parses `text` (the contents of `file`) as JSON and validates it with `schema`.
 * Throws CorruptFileError naming the file when either fails, or when it nests deeper than
 * MAX_JSON_DEPTH (writing such a value back would overflow the stack).
 */
export function parseJsonFile<S extends z.ZodType>(file: string, text: string, schema: S): z.infer<S> {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new CorruptFileError(file, `not valid JSON: ${(err as Error).message}`)
  }
  if (tooDeep(raw)) throw new CorruptFileError(file, `nested deeper than ${MAX_JSON_DEPTH} levels`)
  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.length ? issue.path.join('.') : '(root)'
    throw new CorruptFileError(file, `${where}: ${issue?.message ?? 'does not match the schema'}`)
  }
  return parsed.data
}

/** No file swarm reads nests anywhere near this deep (an inbox entry: 4 levels). */
const MAX_JSON_DEPTH = 1_000

/** True when `value` nests deeper than MAX_JSON_DEPTH; iterative, so a deep value cannot overflow the stack here. */
function tooDeep(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]]
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [v, depth] = item
    if (v === null || typeof v !== 'object') continue
    if (depth >= MAX_JSON_DEPTH) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
  }
  return false
}

/** Reads and validates a JSON file; undefined when the file does not exist. */
export async function readJsonFile<S extends z.ZodType>(file: string, schema: S, opts: ReadOptions = {}): Promise<z.infer<S> | undefined> {
  const text = await readFileIfExists(file, opts)
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
 * CorruptFileError that says where it went (the caller decides whether to start afresh). A
 * symbolic link refused (opts.noFollow) is left where it is.
 */
export async function readJsonForWrite<S extends z.ZodType>(file: string, schema: S, opts: ReadOptions = {}): Promise<z.infer<S> | undefined> {
  try {
    return await readJsonFile(file, schema, opts)
  } catch (err) {
    if (!(err instanceof CorruptFileError) || isSymlinkRefusal(err)) throw err
    const movedTo = await moveAside(file)
    throw new CorruptFileError(file, err.message.replace(/^corrupt file \S+ \((.*)\)$/, '$1'), { movedTo, cause: err })
  }
}

/** True when `p` is a directory (a link to one counts); false when it is anything else or missing. */
export function isDirectorySync(p: string): boolean {
  try {
    return fsSync.statSync(p).isDirectory()
  } catch {
    return false
  }
}
