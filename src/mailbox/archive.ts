import { CorruptFileError } from '../errors.js'
import { NOFOLLOW, openNoFollow, readFileIfExists } from '../util/fs.js'
import { messageKey } from './entry.js'
import { InboxMessage } from './types.js'

/**
 * Past this many read entries, a write moves every read entry of the inbox to its archive, so the
 * inbox (rewritten whole on each append) stays small and an append costs the same at message 10
 * and 100,000.
 */
export const ARCHIVE_THRESHOLD = 100

/** `<inboxes>/<agent>.json` → `<inboxes>/<agent>.archive.jsonl` (append-only, one entry a line). */
export function archivePath(inboxFile: string): string {
  return inboxFile.replace(/\.json$/, '') + '.archive.jsonl'
}

/** Splits entries into those to keep in the inbox and those to archive (none below the threshold). */
export function splitForArchive(entries: InboxMessage[]): { keep: InboxMessage[]; archive: InboxMessage[] } {
  let readCount = 0
  for (const m of entries) if (m.read === true) readCount++
  if (readCount <= ARCHIVE_THRESHOLD) return { keep: entries, archive: [] }
  return { keep: entries.filter((m) => m.read !== true), archive: entries.filter((m) => m.read === true) }
}

/**
 * Appends entries to the archive. Call under the inbox lock and BEFORE rewriting the inbox: a crash
 * in between leaves an entry in both places (readArchive dedups), never in neither.
 */
export async function appendToArchive(inboxFile: string, entries: InboxMessage[]): Promise<void> {
  if (entries.length === 0) return
  const file = archivePath(inboxFile)
  const handle = await openNoFollow(file, NOFOLLOW.readAppend) // a symbolic link there is refused, never appended through
  try {
    let prefix = ''
    const { size } = await handle.stat()
    if (size > 0) {
      // A crash mid-append can leave a torn last line; start on a fresh line so it stays alone.
      const last = Buffer.alloc(1)
      await handle.read(last, 0, 1, size - 1)
      if (last[0] !== 0x0a) prefix = '\n'
    }
    await handle.appendFile(prefix + entries.map((m) => JSON.stringify(m)).join('\n') + '\n')
  } finally {
    await handle.close()
  }
}

/**
 * Reads the archived (read) history of an inbox, oldest first; [] when there is none. A torn line
 * left by a crash mid-append is skipped; any other bad line is a CorruptFileError naming the file.
 */
export async function readArchive(inboxFile: string): Promise<InboxMessage[]> {
  const file = archivePath(inboxFile)
  const text = await readFileIfExists(file)
  if (text === undefined) return []
  const lines = text.split('\n')
  const out: InboxMessage[] = []
  const seen = new Set<string>()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line.trim() === '') continue
    const parsed = parseLine(line)
    if (!parsed) {
      // A torn write stops mid-entry, so it cannot end with the entry's closing brace.
      if (!line.trimEnd().endsWith('}')) continue
      throw new CorruptFileError(file, `line ${i + 1} is not an inbox entry`)
    }
    const key = messageKey(parsed)
    if (seen.has(key)) continue
    seen.add(key)
    out.push(parsed)
  }
  return out
}

function parseLine(line: string): InboxMessage | undefined {
  try {
    const parsed = InboxMessage.safeParse(JSON.parse(line))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined // not JSON: the caller decides whether it is a torn line
  }
}
