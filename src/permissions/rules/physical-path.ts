// Where a path really lands: symlinks resolved component by component (realpathSync, readlinkSync),
// and every form — lexical and physical — under which a tool's path argument could be understood.
// The one place permission rules touch the file system, kept out of the pure set (docs/layers.json).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { lexicalPath } from './rule-paths.js'

/**
 * Resolves `p` (absolute, or relative to `cwd`) the way the kernel will: component by component,
 * following every symlink that exists and applying `..` to the *resolved* parent, so neither
 * `a/link/../x` nor a symlinked directory hides where a write lands. Components past the first
 * one that does not exist are appended as written (nothing beneath them can be a symlink yet).
 */
export function physicalPath(p: string, cwd: string, depth = 0): string {
  const start = path.isAbsolute(p) ? '/' : physicalPath(cwd, '/', depth)
  let current = start
  let exists = true
  for (const part of p.split(/[/\\]+/)) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      current = path.dirname(current)
      continue
    }
    const next = path.join(current, part)
    if (exists) {
      try {
        current = fs.realpathSync(next)
        continue
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        // ENOENT: a new file. ENOTDIR/ELOOP/EACCES: keep the lexical name; the tool will fail anyway.
        // A dangling symlink: the write creates its target, so follow it.
        if (code === 'ENOENT' && depth < MAX_LINK_DEPTH && isDanglingSymlink(next)) {
          current = physicalPath(path.resolve(current, fs.readlinkSync(next)), '/', depth + 1)
          exists = false
          continue
        }
        exists = false
      }
    }
    current = next
  }
  return current
}

const MAX_LINK_DEPTH = 16

function isDanglingSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink()
  } catch {
    return false
  }
}

/**
 * Every absolute form under which a tool's path argument could be understood: as written
 * (lexically resolved) and physically resolved, plus the `~`-expanded pair when it starts with `~/`
 * (a tool might expand it). Checks that must not be escaped test *any* form; auto-allows need *all*.
 */
export function pathCandidates(p: string, cwd: string, home: string = os.homedir()): string[] {
  const out = new Set([lexicalPath(p, cwd), physicalPath(p, cwd)])
  if (p === '~' || p.startsWith('~/')) {
    const expanded = lexicalPath(p, cwd, home)
    out.add(expanded)
    out.add(physicalPath(expanded, '/'))
  }
  return [...out]
}

/** Both the lexical and the physical form of a directory (they differ when it is a symlink). */
export function dirForms(dir: string, cwd = '/'): string[] {
  const lexical = path.resolve(cwd, dir)
  const physical = physicalPath(lexical, '/')
  return lexical === physical ? [lexical] : [lexical, physical]
}
