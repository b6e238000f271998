// Path arithmetic for permission rules, lexical only: `~` expansion, `path.resolve`, containment.
// Pure (docs/layers.json "pure"): touches no file; what a symlink resolves to is physical-path.ts.
import path from 'node:path'

/** `path.resolve` against cwd, with `~/` expanded when `home` is given. */
export function lexicalPath(p: string, cwd: string, home?: string): string {
  if (home !== undefined && (p === '~' || p.startsWith('~/'))) return path.join(home, p.slice(1))
  return path.resolve(cwd, p)
}

/** True when absolute `p` is `dir` or beneath it. */
export function isWithin(p: string, dir: string): boolean {
  const rel = path.relative(dir, p)
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !path.isAbsolute(rel))
}

/** True when `p` is within any form of any of `dirs`. */
export function isWithinAny(p: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => isWithin(p, d))
}
