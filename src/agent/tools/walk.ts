import type { Dirent } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { ControlPlaneGuard } from './control-plane-guard.js'

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
  /** Directories and links it names as control plane are left out (and counted in `skipped`). */
  guard?: ControlPlaneGuard
}

export interface WalkResult {
  files: WalkedFile[]
  /** True when the walk stopped at `maxFiles`. */
  truncated: boolean
  /** Entries left out because they are swarm's control plane. */
  skipped: number
}

/**
 * Lists the regular files under `root` (depth first, names sorted). Symbolic links to files
 * are listed; links to directories are not followed (no cycles). Unreadable directories are
 * skipped: a search reports what it can see. With a guard, the control plane is never entered
 * and no link into it is listed.
 */
export async function walkFiles(root: string, options: WalkOptions = {}): Promise<WalkResult> {
  const skip = options.skipDirs ?? DEFAULT_SKIP_DIRS
  const max = options.maxFiles ?? MAX_WALK_FILES
  const files: WalkedFile[] = []
  let seen = 0
  let truncated = false
  let skipped = 0
  const guard = options.guard

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
        if (skip.has(entry.name)) continue
        if (guard && (await guard.isControlDir(abs, entry.name))) {
          skipped++
          continue
        }
        await visit(abs, childRel)
        continue
      }
      if (entry.isSymbolicLink() && !(await isFileTarget(abs))) continue
      if (entry.isSymbolicLink() && guard && (await guard.contains(abs))) {
        skipped++
        continue
      }
      if (!entry.isFile() && !entry.isSymbolicLink()) continue
      if (++seen > max) {
        truncated = true
        return
      }
      if (!options.accept || options.accept(childRel)) files.push({ abs, rel: childRel })
    }
  }

  await visit(root, '')
  return { files, truncated, skipped }
}

async function isFileTarget(link: string): Promise<boolean> {
  try {
    return (await fs.stat(link)).isFile()
  } catch {
    return false // dangling link
  }
}
