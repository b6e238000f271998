/**
 * A parsed file kept while the file is unchanged, so a file read often and written seldom (a
 * team's config.json) is parsed once per change, not once per read. Never stale: an entry is
 * used without reading only when the file's identity (dev, ino, size, mtime, ctime — lstat, so a
 * link put in its place never matches) is the one seen before the entry's text was read, and that
 * identity had settled; otherwise the file is read and compared with the text parsed.
 */
import fs from 'node:fs/promises'
import type { BigIntStats } from 'node:fs'

/**
 * How old a file's ctime must be, when it is looked at, before its identity is trusted: a
 * rewrite of the same size within one tick of the file system's timestamps changes nothing lstat
 * shows. Timestamps with nanoseconds tick at the kernel's clock (a few ms); whole seconds (HFS+,
 * FAT's two) are a coarse clock.
 */
const SETTLED_FINE_MS = 50
const SETTLED_COARSE_MS = 3_000
/** Files kept (a process reads a few teams; tests make many homes): the oldest is dropped beyond this. */
const MAX_ENTRIES = 32

interface Entry<T> {
  /** The identity lstat showed just before `text` was read. */
  key: string
  /** That identity can be trusted: nothing written after the look could keep it. */
  settled: boolean
  text: string
  value: T
}

export interface ParsedFileCacheOptions {
  /** The clock the ages are measured with (tests); Date.now by default. */
  now?: () => number
}

export class ParsedFileCache<T> {
  private readonly entries = new Map<string, Entry<T>>()
  private readonly now: () => number
  constructor(options: ParsedFileCacheOptions = {}) {
    this.now = options.now ?? Date.now
  }

  /**
   * The file's parsed value, or undefined when it does not exist. `readText` reads it (its errors
   * are the caller's: a link refused, a directory in its place); `parse` makes the value and may
   * throw (nothing is kept then). The value is shared between callers: never change it — clone it.
   */
  async read(file: string, readText: () => Promise<string | undefined>, parse: (text: string) => T): Promise<T | undefined> {
    const at = this.now()
    const stat = await fs.lstat(file, { bigint: true }).catch(() => undefined) // readText reports why, if it cannot read either
    const key = stat ? identity(stat) : undefined
    const kept = this.entries.get(file)
    if (kept && key !== undefined && kept.key === key && kept.settled) return kept.value
    const text = await readText()
    if (text === undefined) {
      this.entries.delete(file)
      return undefined
    }
    const settled = stat !== undefined && isSettled(stat, at)
    if (kept && kept.text === text) {
      if (key === undefined) this.entries.delete(file)
      else Object.assign(kept, { key, settled })
      return kept.value
    }
    this.entries.delete(file)
    const value = parse(text)
    if (key !== undefined) {
      this.entries.set(file, { key, settled, text, value })
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
    }
    return value
  }
}

function identity(s: BigIntStats): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
}

function isSettled(s: BigIntStats, at: number): boolean {
  const fine = s.ctimeNs % 1_000_000_000n !== 0n
  return at - Number(s.ctimeNs / 1_000_000n) > (fine ? SETTLED_FINE_MS : SETTLED_COARSE_MS)
}
