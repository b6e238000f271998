import path from 'node:path'
import { isWithin } from './rule-paths.js'
import { dirForms } from './physical-path.js'

/**
 * A file-path rule pattern (`Edit(src/**)`, `Read(~/.ssh/**)`), compiled. Forms, as in Claude Code:
 *
 * - `//abs/path` — an absolute path from the filesystem root;
 * - `~/path` — relative to the home directory;
 * - `/path` — relative to the rule's base: the project directory for project settings, the
 *   settings file's directory for user settings, the cwd for command-line rules;
 * - `./path` or `path` — relative to the cwd at evaluation time.
 *
 * The glob part follows gitignore: `*` and `?` stay within one path segment, `**` spans segments,
 * `[abc]` is a class; a pattern with no `/` inside (`*.env`, `.env`) matches at any depth below its
 * root; a pattern that names a directory also matches everything inside it (`Read(~/.ssh)`).
 */
export interface PathPattern {
  /** Lexical and physical forms of the directory the glob is relative to. */
  roots: string[]
  regex: RegExp
}

export interface PatternContext {
  cwd: string
  home: string
  baseDir?: string
}

export function compilePathPattern(content: string, ctx: PatternContext): PathPattern {
  let root: string
  let glob: string
  let anchored = true
  if (content.startsWith('//')) {
    root = '/'
    glob = content.slice(2)
  } else if (content === '~' || content.startsWith('~/')) {
    root = ctx.home
    glob = content.slice(2)
  } else if (content.startsWith('/')) {
    root = ctx.baseDir ?? ctx.cwd
    glob = content.slice(1)
  } else if (content.startsWith('./')) {
    root = ctx.cwd
    glob = content.slice(2)
  } else {
    root = ctx.cwd
    glob = content
    anchored = glob.replace(/\/+$/, '').includes('/')
  }
  glob = glob.replace(/\/+$/, '')
  const body = glob === '' ? '.*' : globToRegexSource(glob)
  const source = anchored ? `^(?:${body})(?:/.*)?$` : `^(?:.*/)?(?:${body})(?:/.*)?$`
  return { roots: dirForms(root), regex: new RegExp(source, 's') }
}

/** True when absolute path `p` matches the pattern under any form of its root. */
export function matchesPathPattern(pattern: PathPattern, p: string): boolean {
  return pattern.roots.some((root) => {
    if (!isWithin(p, root)) return false
    const rel = path.relative(root, p).split(path.sep).join('/')
    return rel !== '' && pattern.regex.test(rel)
  })
}

/** gitignore-style glob → regular expression source (no anchors). */
export function globToRegexSource(glob: string): string {
  let out = ''
  let i = 0
  while (i < glob.length) {
    const atSegmentStart = i === 0 || glob[i - 1] === '/'
    if (atSegmentStart && glob.startsWith('**/', i)) {
      out += '(?:.*/)?'
      i += 3
    } else if (atSegmentStart && glob.startsWith('**', i) && i + 2 === glob.length) {
      out += '.*'
      i += 2
    } else if (glob[i] === '*') {
      out += '[^/]*'
      i += 1
    } else if (glob[i] === '?') {
      out += '[^/]'
      i += 1
    } else if (glob[i] === '[') {
      const close = glob.indexOf(']', i + 2)
      if (close === -1) {
        out += '\\['
        i += 1
      } else {
        let cls = glob.slice(i + 1, close)
        if (cls.startsWith('!')) cls = '^' + cls.slice(1)
        out += `[${cls.replace(/\\/g, '\\\\')}]`
        i = close + 1
      }
    } else if (glob[i] === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1])
      i += 2
    } else {
      out += escapeRegex(glob[i])
      i += 1
    }
  }
  return out
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
