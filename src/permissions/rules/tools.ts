/**
 * Tool families as permission rules see them (Claude Code semantics): `Edit(...)` rules cover
 * every tool that edits files, `Read(...)` rules every tool that reads them.
 */
export const FILE_EDIT_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit'])
export const FILE_READ_TOOLS: ReadonlySet<string> = new Set(['Read', 'Glob', 'Grep', 'LS', 'NotebookRead'])

/** Read tools that walk a directory tree rather than open one file. */
export const SEARCH_TOOLS: ReadonlySet<string> = new Set(['Glob', 'Grep', 'LS'])

/**
 * What a tool does, declared on the tool itself (gemini-cli's `Kind`): `read` only reads files,
 * `edit` changes them, `execute` runs programs, `coordination` only talks to swarm (messages, the
 * task list, leaving plan mode, starting and stopping agents whose own calls are checked). Read and
 * coordination tools pass in every mode, plan included, unless a rule says otherwise.
 */
export type ToolKind = 'read' | 'edit' | 'execute' | 'coordination'

export type ToolFamily = 'edit' | 'read' | 'bash' | 'webfetch' | 'other'

export function toolFamily(toolName: string): ToolFamily {
  if (FILE_EDIT_TOOLS.has(toolName)) return 'edit'
  if (FILE_READ_TOOLS.has(toolName)) return 'read'
  if (toolName === 'Bash') return 'bash'
  if (toolName === 'WebFetch') return 'webfetch'
  return 'other'
}

/**
 * The paths a file tool touches, as given (possibly relative). Search tools without a `path`
 * search the cwd, reported as '.'. Empty for tools that touch no file.
 */
export function targetPaths(toolName: string, input: Record<string, unknown>): string[] {
  const family = toolFamily(toolName)
  if (family !== 'edit' && family !== 'read') return []
  const keys = ['file_path', 'notebook_path', 'path']
  const found = keys.map((k) => input[k]).filter((v): v is string => typeof v === 'string' && v !== '')
  if (found.length === 0 && SEARCH_TOOLS.has(toolName)) return ['.']
  return found
}

/** The shell command of a Bash call, or undefined when the input has none. */
export function bashCommand(input: Record<string, unknown>): string | undefined {
  return typeof input.command === 'string' ? input.command : undefined
}
