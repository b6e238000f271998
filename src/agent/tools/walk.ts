import type { Dirent } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'

/** Directories no walk descends into unless the search starts inside them. */
export const DEFAULT_SKIP_DIRS: ReadonlySet<string> = new Set(['node_modules', '.git', '.hg', '.svn'])
/** A walk stops after this many files, so a search of `/` cannot run for minutes. */
export const MAX_WALK_FILES = 200_000

export interface WalkedFile {
  /** Absolute path. */
  abs: string
  /** Path relative to the walk's root, with `/` separators. */
  rel: string
}

export interface WalkOptions {
  signal?: AbortSignal
  skipDirs?: ReadonlySet<string>
  maxFiles?: number
  /** Called with each file's relative path; only files it accepts are returned. */
  accept?: (rel: string) => boolean
}

export interface WalkResult {
  files: WalkedFile[]
  /** True when the walk stopped at `maxFiles`. */
  truncated: boolean
}

/**
 * Lists the regular files under `root` (depth first, names sorted). Symbolic links to files
 * are listed; links to directories are not followed (no cycles). Unreadable directories are
 * skipped: a search reports what it can see.
 */
export async function walkFiles(root: string, options: WalkOptions = {}): Promise<WalkResult> {
  const skip = options.skipDirs ?? DEFAULT_SKIP_DIRS
  const max = options.maxFiles ?? MAX_WALK_FILES
  const files: WalkedFile[] = []
  let seen = 0
  let truncated = false

  async function visit(dir: string, rel: string): Promise<void> {
    options.signal?.throwIfAborted()
    let entries: Dirent[]
    try {
      entries = await fs.readdir(dir, { withFileTypes: true })
    } catch (err) {
      if (rel === '') throw err
      return // unreadable subdirectory (permissions, removed meanwhile)
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (truncated) return
      const abs = path.join(dir, entry.name)
      const childRel = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) await visit(abs, childRel)
        continue
      }
      if (entry.isSymbolicLink() && !(await isFileTarget(abs))) continue
      if (!entry.isFile() && !entry.isSymbolicLink()) continue
      if (++seen > max) {
        truncated = true
        return
      }
      if (!options.accept || options.accept(childRel)) files.push({ abs, rel: childRel })
    }
  }

  await visit(root, '')
  return { files, truncated }
}

async function isFileTarget(link: string): Promise<boolean> {
  try {
    return (await fs.stat(link)).isFile()
  } catch {
    return false // dangling link
  }
}
