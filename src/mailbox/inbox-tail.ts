import fs from 'node:fs'
import { parseJsonFile } from '../util/fs.js'
import { InboxFile, type InboxMessage } from './types.js'

/**
 * Reads one inbox again and again for a watcher, parsing only what was appended since the last
 * read when that is all that changed. Every merge rewrites the inbox with the same bytes plus the
 * new entries at the end (JSON.stringify(entries, null, 2)), and under load a watcher reads it a
 * hundred times a second: parsing and validating the whole file each time cost the recipient
 * process more than the appends cost their writers. Anything else (entries marked read, archived,
 * a file Claude Code wrote) is parsed whole.
 */
export class InboxTail {
  private bytes: Buffer = Buffer.alloc(0)
  private entries: InboxMessage[] = []

  constructor(private readonly file: string) {}

  /**
   * The inbox as it is now ([] when missing or empty), and `from`: the index of the first entry
   * not in the previous read's (0 when the file was parsed whole). CorruptFileError when it does
   * not parse.
   */
  read(): { entries: InboxMessage[]; from: number } {
    const bytes = readIfExists(this.file)
    if (bytes.equals(this.bytes)) return { entries: this.entries, from: this.entries.length }
    const appended = this.appended(bytes)
    const from = appended ? this.entries.length : 0
    const entries = appended ? this.entries.concat(appended) : parseWhole(this.file, bytes)
    this.bytes = bytes
    this.entries = entries
    return { entries, from }
  }

  /** The entries after the previous content, when the file is that content with entries appended. */
  private appended(bytes: Buffer): InboxMessage[] | undefined {
    // Previous: `[\n  {…}\n]`; now `[\n  {…},\n  {…}\n]`: the same bytes up to the closing `\n]`, then `,`.
    const keep = this.bytes.length - 2
    if (this.entries.length === 0 || keep <= 0 || bytes.length <= this.bytes.length) return undefined
    if (this.bytes[keep] !== 0x0a || this.bytes[keep + 1] !== 0x5d || bytes[keep] !== 0x2c) return undefined
    if (bytes.compare(this.bytes, 0, keep, 0, keep) !== 0) return undefined
    try {
      return InboxFile.parse(JSON.parse(`[${bytes.toString('utf8', keep + 1)}`))
    } catch {
      return undefined // not a plain append after all: parse it whole
    }
  }
}

function readIfExists(file: string): Buffer {
  try {
    return fs.readFileSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0)
    throw err
  }
}

function parseWhole(file: string, bytes: Buffer): InboxMessage[] {
  const text = bytes.toString('utf8')
  if (text.trim() === '') return []
  return parseJsonFile(file, text, InboxFile)
}
