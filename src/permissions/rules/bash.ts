/**
 * Just enough shell parsing for permission rules: split a command line into its simple commands
 * (`a && b; c | d` → a, b, c, d), drop comments, read a here-document's body line by line, notice
 * command substitution (and parameter expansion that can evaluate a value) and output redirection,
 * and match `Bash(...)` rule content against one simple command. It is a conservative reader, not a shell:
 * anything it does not understand ends up in a part that no allow rule matches, so it is asked.
 */

/** One simple command of a command line. */
export interface SimpleCommand {
  /** As written, trimmed, unquoted whitespace collapsed to one space. */
  text: string
  /** With quotes removed and escapes resolved: `'rm' -rf` → `rm -rf` (for deny/ask matching). */
  plain: string
  /** Holds `$(…)`, backticks, `<(…)` or `>(…)`. */
  hasSubstitution: boolean
  /** Targets of output redirections other than /dev/null and fd duplication (`2>&1`). */
  writesTo: string[]
}

export interface ParsedCommand {
  parts: SimpleCommand[]
  /** Simple commands found inside substitutions, at any depth. */
  nested: SimpleCommand[]
  hasSubstitution: boolean
}

const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty'])

export function parseCommand(command: string): ParsedCommand {
  const parts: SimpleCommand[] = []
  const nested: SimpleCommand[] = []
  let text = ''
  let plain = ''
  let sub = false
  let writes: string[] = []
  let hasSubstitution = false
  const heredocs: HereDocument[] = []

  const flush = () => {
    const t = text.trim()
    if (t !== '') parts.push({ text: t, plain: plain.trim().replace(/\s+/g, ' '), hasSubstitution: sub, writesTo: writes })
    text = ''
    plain = ''
    sub = false
    writes = []
  }
  const space = () => {
    if (text !== '' && !text.endsWith(' ')) text += ' '
    if (plain !== '' && !plain.endsWith(' ')) plain += ' '
  }
  const substitution = (raw: string, inner: string) => {
    text += raw
    plain += raw
    sub = true
    hasSubstitution = true
    const parsed = parseCommand(inner)
    nested.push(...parsed.parts, ...parsed.nested)
  }

  let i = 0
  const n = command.length
  while (i < n) {
    const c = command[i]
    const next = command[i + 1]
    if (c === '\\') {
      if (next === '\n') {
        i += 2 // line continuation
        continue
      }
      text += c + (next ?? '')
      plain += next ?? ''
      i += 2
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1)
      const stop = end === -1 ? n : end + 1
      text += command.slice(i, stop)
      plain += command.slice(i + 1, end === -1 ? n : end)
      i = stop
    } else if (c === '"') {
      i = readDoubleQuoted(
        command,
        i,
        (raw, inner) => substitution(raw, inner),
        (t, p) => {
          text += t
          plain += p
        },
      )
    } else if (c === '#' && (text === '' || text.endsWith(' '))) {
      const end = command.indexOf('\n', i) // a comment, quotes and all, to the end of its line
      i = end === -1 ? n : end
    } else if (c === '$' && (next === '{' || next === '[') && !isPlainParameter(command, i)) {
      text += c + next // `${x@P}`, `${y:=…}`, `${!x}`, `$[y]` may run a value as a command
      plain += c + next
      sub = true
      hasSubstitution = true
      i += 2
    } else if ((c === '$' || c === '<' || c === '>') && next === '(') {
      const end = matchingParen(command, i + 1)
      substitution(command.slice(i, end), command.slice(i + 2, end - 1))
      i = end
    } else if (c === '`') {
      const end = closingBacktick(command, i + 1)
      substitution(command.slice(i, end), command.slice(i + 1, Math.max(i + 1, end - 1)))
      i = end
    } else if (c === '>') {
      const target = redirectTarget(command, i)
      text += command.slice(i, target.end)
      plain += command.slice(i, target.end)
      if (target.word !== undefined && !HARMLESS_TARGETS.has(target.word)) writes.push(target.word)
      i = target.end
    } else if (c === '<' && next === '<' && command[i + 2] !== '<') {
      const doc = hereDocument(command, i)
      heredocs.push(doc)
      text += command.slice(i, doc.end)
      plain += command.slice(i, doc.end)
      i = doc.end
    } else if (c === '\n' && heredocs.length > 0) {
      flush()
      // Bash reads their bodies as data; here each body line is read as commands on its own (no
      // quote spans past it), which only asks more — `<<` may be a shift in `((…))` after all.
      const body = hereDocumentBodies(command, i + 1, heredocs.splice(0))
      for (const line of body.lines) {
        const inner = parseCommand(line)
        parts.push(...inner.parts)
        nested.push(...inner.nested)
        hasSubstitution ||= inner.hasSubstitution
      }
      i = body.end
    } else if (c === ';' || c === '\n' || c === '(' || c === ')') {
      flush()
      i += 1
    } else if (c === '&') {
      if (next === '&') {
        flush()
        i += 2
      } else if (next === '>' || /[<>]$/.test(text)) {
        text += c // `&>file` or `2>&1`
        plain += c
        i += 1
      } else {
        flush() // background
        i += 1
      }
    } else if (c === '|') {
      if (text.endsWith('>')) {
        text += c // `>|` clobber
        plain += c
        i += 1
      } else {
        flush()
        i += next === '|' || next === '&' ? 2 : 1
      }
    } else if (/\s/.test(c)) {
      space()
      i += 1
    } else {
      text += c
      plain += c
      i += 1
    }
  }
  flush()
  return { parts, nested, hasSubstitution }
}

/** Reads a "…" string starting at `start`; returns the index after it. */
function readDoubleQuoted(
  s: string,
  start: number,
  onSubstitution: (raw: string, inner: string) => void,
  emit: (text: string, plain: string) => void,
): number {
  emit('"', '')
  let i = start + 1
  while (i < s.length && s[i] !== '"') {
    const c = s[i]
    if (c === '\\' && i + 1 < s.length) {
      emit(c + s[i + 1], s[i + 1])
      i += 2
    } else if (c === '$' && (s[i + 1] === '{' || s[i + 1] === '[') && !isPlainParameter(s, i)) {
      onSubstitution(c + s[i + 1], '')
      i += 2
    } else if (c === '$' && s[i + 1] === '(') {
      const end = matchingParen(s, i + 1)
      onSubstitution(s.slice(i, end), s.slice(i + 2, end - 1))
      i = end
    } else if (c === '`') {
      const end = closingBacktick(s, i + 1)
      onSubstitution(s.slice(i, end), s.slice(i + 1, Math.max(i + 1, end - 1)))
      i = end
    } else {
      emit(c, c)
      i += 1
    }
  }
  if (i < s.length) {
    emit('"', '')
    i += 1
  }
  return i
}

interface HereDocument {
  /** Just past the delimiter word. */
  end: number
  delimiter: string
  /** `<<-`: the body's lines, the delimiter's too, lose their leading tabs. */
  stripTabs: boolean
}

/** The `<<[-]WORD` at `at`: its delimiter, quotes removed. */
function hereDocument(s: string, at: number): HereDocument {
  let i = at + 2
  const stripTabs = s[i] === '-'
  if (stripTabs) i += 1
  while (s[i] === ' ' || s[i] === '\t') i += 1
  let delimiter = ''
  while (i < s.length && !/[\s;&|()<>]/.test(s[i])) {
    if (s[i] === "'" || s[i] === '"') {
      const close = s.indexOf(s[i], i + 1)
      const stop = close === -1 ? s.length : close
      delimiter += s.slice(i + 1, stop)
      i = stop + 1
    } else if (s[i] === '\\') {
      delimiter += s[i + 1] ?? ''
      i += 2
    } else {
      delimiter += s[i]
      i += 1
    }
  }
  return { end: Math.min(i, s.length), delimiter, stripTabs }
}

/** The body lines of `docs`, read in order from `from`, each up to its delimiter's line (or the end), and the index after them. */
function hereDocumentBodies(s: string, from: number, docs: readonly HereDocument[]): { lines: string[]; end: number } {
  const lines: string[] = []
  let i = from
  for (const doc of docs) {
    while (i < s.length) {
      const eol = s.indexOf('\n', i)
      const line = s.slice(i, eol === -1 ? s.length : eol)
      i = eol === -1 ? s.length : eol + 1
      if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) break
      lines.push(line)
    }
  }
  return { lines, end: i }
}

/**
 * `${name}`, `${1}`, `${?}`: a parameter expanded as it is. Any other `${…}` (assignment, `@P`
 * prompt expansion, an arithmetic offset, `!` indirection) or `$[…]` can evaluate text a command
 * assigned, so it counts as a substitution.
 */
function isPlainParameter(s: string, at: number): boolean {
  return /^\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]|[#?@*!$-])\}/.test(s.slice(at, at + 260))
}

/** Index just past the `)` matching the `(` at `open`, skipping quotes; the end if unbalanced. */
function matchingParen(s: string, open: number): number {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    const c = s[i]
    if (c === '\\') i += 1
    else if (c === "'") {
      const end = s.indexOf("'", i + 1)
      if (end === -1) return s.length
      i = end
    } else if (c === '(') depth += 1
    else if (c === ')') {
      depth -= 1
      if (depth === 0) return i + 1
    }
  }
  return s.length
}

function closingBacktick(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === '\\') i += 1
    else if (s[i] === '`') return i + 1
  }
  return s.length
}

/** The word after a `>`/`>>`/`>|`; undefined for fd duplication (`>&2`). */
function redirectTarget(s: string, at: number): { end: number; word?: string } {
  let i = at + 1
  if (s[i] === '>' || s[i] === '|') i += 1
  if (s[i] === '&') {
    let j = i + 1
    while (j < s.length && /[0-9-]/.test(s[j])) j += 1
    if (j > i + 1) return { end: j }
    i += 1
  }
  while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i += 1
  let j = i
  let word = ''
  while (j < s.length && !/[\s;&|()<>]/.test(s[j])) {
    if (s[j] === "'" || s[j] === '"') {
      const end = s.indexOf(s[j], j + 1)
      const stop = end === -1 ? s.length : end
      word += s.slice(j + 1, stop)
      j = stop + 1
    } else {
      word += s[j]
      j += 1
    }
  }
  return { end: j, word: word === '' ? undefined : word }
}

/**
 * Whether Bash rule `content` matches simple command `cmd` (Claude Code semantics):
 * `npm test:*` — the command is `npm test` or starts with `npm test` and a space;
 * `git * main` — `*` matches any text, and a trailing ` *` may also match nothing;
 * anything else — the exact command.
 */
export function matchesBashContent(content: string, cmd: string): boolean {
  const c = content.trim()
  if (c.endsWith(':*')) {
    const prefix = c.slice(0, -2).trim()
    return cmd === prefix || (cmd.startsWith(prefix) && /\s/.test(cmd[prefix.length] ?? ''))
  }
  if (c.includes('*')) return wildcardRegex(c).test(cmd)
  return cmd === c
}

/** An exact rule has no wildcard: it names one command and nothing else. */
export function isExactBashContent(content: string): boolean {
  return !content.includes('*')
}

function wildcardRegex(content: string): RegExp {
  const trailing = content.endsWith(' *')
  const body = trailing ? content.slice(0, -2) : content
  const source = body
    .split('*')
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${source}${trailing ? '(?:\\s.*)?' : ''}$`, 's')
}
