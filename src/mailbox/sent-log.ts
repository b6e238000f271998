import fs from 'node:fs/promises'
import path from 'node:path'
import { FILE_MODE, ensureDir } from '../util/fs.js'
import type { InboxMessage } from './types.js'

/**
 * What swarm sent to a member that consumes its own inbox (Claude Code deletes the entries it has
 * read), one JSON line per entry, so `swarm inbox` can show such a message as `consumed` instead of
 * losing it. Append-only; a torn last line (a writer killed mid-append) is skipped on read.
 */
export interface SentRecord {
  msg_id: string
  from: string
  timestamp: string
  text: string
  summary?: string
}

/** Opens (creating) the record before anything is sent: a link or an unwritable place refuses the send, not half of it. */
export async function prepareSentLog(file: string): Promise<void> {
  await ensureDir(path.dirname(file))
  const handle = await openLog(file)
  await handle.close()
}

export async function recordSent(file: string, entries: readonly InboxMessage[]): Promise<void> {
  const lines = entries
    .filter((e): e is InboxMessage & { msg_id: string } => typeof e.msg_id === 'string')
    .map((e) =>
      JSON.stringify({
        msg_id: e.msg_id,
        from: e.from,
        timestamp: e.timestamp,
        text: e.text,
        ...(e.summary !== undefined && { summary: e.summary }),
      }),
    )
  if (lines.length === 0) return
  await ensureDir(path.dirname(file))
  const handle = await openLog(file)
  try {
    await handle.write(`${lines.join('\n')}\n`)
  } finally {
    await handle.close()
  }
}

/** Every record, oldest first; a line that does not parse (torn) is skipped. Missing file: none. */
export async function readSent(file: string): Promise<SentRecord[]> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const out: SentRecord[] = []
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      const r = JSON.parse(line) as Partial<SentRecord>
      if (typeof r.msg_id === 'string' && typeof r.from === 'string' && typeof r.text === 'string' && typeof r.timestamp === 'string')
        out.push(r as SentRecord)
    } catch {
      // A torn line from a writer killed mid-append: the others still count.
    }
  }
  return out
}

/** O_NOFOLLOW: a link planted in place of the log is refused, never followed. */
function openLog(file: string): Promise<fs.FileHandle> {
  return fs.open(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, FILE_MODE)
}
