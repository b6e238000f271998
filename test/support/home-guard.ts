import fs from 'node:fs'
import path from 'node:path'

/**
 * What a test run may not change on the user's machine, as data: a snapshot (path → type, size,
 * mtime) of the files a test could touch by mistake, taken before the run and compared after.
 * Pure of any run: global-setup.ts decides what to snapshot and fails the run on a difference.
 */

/** One entry of a snapshot; a directory is compared by its type only (its gained entries say the rest). */
export interface Entry {
  type: 'file' | 'dir' | 'symlink' | 'other'
  size: number
  mtimeMs: number
}

/** Path (relative to the snapshot's root) → entry. */
export type Snapshot = Map<string, Entry>

/** The files of a user's home a stray test writes: tmux's, bash's, git's and Claude Code's. */
export const HOME_WATCHED = ['.tmux.conf', '.config/tmux', '.bash_history', '.gitconfig', '.config/git', '.claude', '.claude.json']

function entryOf(st: fs.Stats): Entry {
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other'
  return type === 'dir' ? { type, size: 0, mtimeMs: 0 } : { type, size: st.size, mtimeMs: st.mtimeMs }
}

/** The entries `names` (relative to `root`) that exist, each directory recursively (a symlink is recorded, never followed). */
export function snapshot(root: string, names: readonly string[]): Snapshot {
  const out: Snapshot = new Map()
  const walk = (rel: string) => {
    let st: fs.Stats
    try {
      st = fs.lstatSync(path.join(root, rel))
    } catch {
      return // absent, or removed while we looked: absent
    }
    out.set(rel, entryOf(st))
    if (!st.isDirectory()) return
    let names: string[] = []
    try {
      names = fs.readdirSync(path.join(root, rel))
    } catch {
      return // unreadable (another user's): its own entry is all we can say
    }
    for (const n of names) walk(path.join(rel, n))
  }
  for (const n of names) walk(n)
  return out
}

/** The top-level names in `dir` that `match` accepts ([] when `dir` is absent). */
export function namesIn(dir: string, match: (name: string) => boolean): string[] {
  try {
    return fs.readdirSync(dir).filter(match)
  } catch {
    return []
  }
}

export interface Difference {
  gained: string[]
  changed: string[]
  removed: string[]
}

export function compare(before: Snapshot, after: Snapshot): Difference {
  const gained = [...after.keys()].filter((p) => !before.has(p))
  const removed = [...before.keys()].filter((p) => !after.has(p))
  const changed = [...after].filter(([p, e]) => {
    const b = before.get(p)
    return b !== undefined && (b.type !== e.type || b.size !== e.size || b.mtimeMs !== e.mtimeMs)
  })
  return { gained: gained.sort(), changed: changed.map(([p]) => p).sort(), removed: removed.sort() }
}

/** `d` without the paths under any of `prefixes` (relative paths, as in the snapshot). */
export function without(d: Difference, prefixes: readonly string[]): Difference {
  const kept = (p: string) => !prefixes.some((x) => p === x || p.startsWith(`${x}${path.sep}`))
  return { gained: d.gained.filter(kept), changed: d.changed.filter(kept), removed: d.removed.filter(kept) }
}

export const isEmpty = (d: Difference): boolean => d.gained.length + d.changed.length + d.removed.length === 0

/** One line per path, absolute: `  gained   /home/u/.tmux.conf`. */
export function describeDifference(root: string, d: Difference): string[] {
  return (['gained', 'changed', 'removed'] as const).flatMap((k) => d[k].map((p) => `  ${k.padEnd(8)} ${path.join(root, p)}`))
}
