/**
 * Glob patterns as Glob and Grep take them: `**` (any number of directories), `*` and `?`
 * (within one path segment), `[abc]` / `[!abc]`, and `{a,b}` alternatives (nestable).
 * Patterns use `/`; `*` also matches names starting with a dot.
 */

const GLOB_CHARS = /[*?[{]/
/** A pattern like `{a,b}{c,d}{e,f}…` could expand without bound. */
const MAX_EXPANSIONS = 1_024

export function hasGlobChars(pattern: string): boolean {
  return GLOB_CHARS.test(pattern)
}

/** Compiles a glob to a RegExp matching a whole `/`-separated relative path. */
export function globToRegExp(pattern: string, options: { caseInsensitive?: boolean } = {}): RegExp {
  const alternatives = expandBraces(pattern).map(expandedToRegExpSource)
  return new RegExp(`^(?:${alternatives.join('|')})$`, options.caseInsensitive ? 'i' : '')
}

/**
 * Splits off the leading segments without glob characters, so a walk can start there:
 * `src/**\/*.ts` → `{ base: 'src', rest: '**\/*.ts' }`. A pattern without any glob
 * characters is a plain path: its directory is the base and its name the rest.
 */
export function splitStaticPrefix(pattern: string): { base: string; rest: string } {
  const absolute = pattern.startsWith('/')
  const segments = pattern.split('/').filter((s, i) => s !== '' || i === 0)
  if (absolute) segments.shift()
  let i = 0
  while (i < segments.length - 1 && !hasGlobChars(segments[i]!)) i++
  const baseSegments = segments.slice(0, i)
  const base = (absolute ? '/' : '') + baseSegments.join('/')
  return { base: base || (absolute ? '/' : '.'), rest: segments.slice(i).join('/') }
}

/** `a{b,c{d,e}}f` → `abf`, `acdf`, `acef`. Unbalanced braces stay literal. */
export function expandBraces(pattern: string): string[] {
  const open = findBraceOpen(pattern)
  if (open < 0) return [pattern]
  const close = matchingBrace(pattern, open)
  if (close < 0) return [pattern]
  const options = splitTopLevel(pattern.slice(open + 1, close))
  if (options.length < 2) {
    // `{x}` is not an alternative: keep the braces literally and continue after them.
    const rest = expandBraces(pattern.slice(close + 1))
    return rest.map((r) => pattern.slice(0, close + 1) + r)
  }
  const prefix = pattern.slice(0, open)
  const suffixes = expandBraces(pattern.slice(close + 1))
  const out: string[] = []
  for (const option of options) {
    for (const head of expandBraces(option)) {
      for (const tail of suffixes) {
        out.push(prefix + head + tail)
        if (out.length > MAX_EXPANSIONS) throw new Error(`glob pattern has too many {…} alternatives: ${pattern}`)
      }
    }
  }
  return out
}

function findBraceOpen(s: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++
    else if (s[i] === '{') return i
  }
  return -1
}

function matchingBrace(s: string, open: number): number {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    if (s[i] === '\\') i++
    else if (s[i] === '{') depth++
    else if (s[i] === '}' && --depth === 0) return i
  }
  return -1
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++
    else if (s[i] === '{') depth++
    else if (s[i] === '}') depth--
    else if (s[i] === ',' && depth === 0) {
      parts.push(s.slice(start, i))
      start = i + 1
    }
  }
  parts.push(s.slice(start))
  return parts
}

function expandedToRegExpSource(pattern: string): string {
  const segments = pattern.split('/')
  let out = ''
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1
    if (segment === '**') {
      out += last ? '.*' : '(?:[^/]*/)*'
      return
    }
    out += segmentToRegExpSource(segment) + (last ? '' : '/')
  })
  return out
}

function segmentToRegExpSource(segment: string): string {
  let out = ''
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!
    if (c === '\\' && i + 1 < segment.length) {
      out += escapeRegExp(segment[++i]!)
    } else if (c === '*') {
      while (segment[i + 1] === '*') i++
      out += '[^/]*'
    } else if (c === '?') {
      out += '[^/]'
    } else if (c === '[') {
      const end = segment.indexOf(']', i + 2)
      if (end < 0) {
        out += '\\['
        continue
      }
      let body = segment.slice(i + 1, end)
      // A negated class must still not match the separator.
      if (body.startsWith('!') || body.startsWith('^')) body = '^/' + body.slice(1)
      out += `[${body.replace(/\\/g, '\\\\').replace(/\//g, '')}]`
      i = end
    } else {
      out += escapeRegExp(c)
    }
  }
  return out
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
