import fs from 'node:fs/promises'
import path from 'node:path'
import { NotFoundError } from '../../errors.js'
import { userAgentsDir } from '../../home/paths.js'
import { BUILT_IN_AGENTS } from './built-in.js'
import { parseAgentFile } from './frontmatter.js'
import type { AgentDefinition, AgentDefinitionDiagnostic, AgentSource, LoadedAgentDefinitions } from './types.js'

/** Project agent definitions: `<cwd>/.claude/agents/*.md`. */
export function projectAgentsDir(cwd: string): string {
  return path.join(cwd, '.claude', 'agents')
}

/**
 * Built-ins, then `<root>/agents/*.md` (user), then `<cwd>/.claude/agents/*.md` (project); a
 * later source replaces a definition of the same name. A bad file is reported and skipped; it
 * never hides the others.
 */
export async function loadAgentDefinitions(options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<LoadedAgentDefinitions> {
  const definitions = new Map<string, AgentDefinition>(BUILT_IN_AGENTS.map((d) => [d.name, d]))
  const diagnostics: AgentDefinitionDiagnostic[] = []
  const sources: [AgentSource, string][] = [
    ['user', userAgentsDir(options.env)],
    ['project', projectAgentsDir(options.cwd)],
  ]
  for (const [source, dir] of sources) {
    const loaded = await loadDir(dir, source, diagnostics)
    for (const def of loaded) definitions.set(def.name, def)
  }
  return { definitions, diagnostics }
}

/** The definition named `typeName`; NotFoundError (exit 3) naming the known types when there is none. */
export function findAgentType(definitions: Map<string, AgentDefinition>, typeName: string): AgentDefinition {
  const def = definitions.get(typeName)
  if (!def) throw new NotFoundError(`unknown agent type "${typeName}"`, { hint: `known types: ${[...definitions.keys()].join(', ')}` })
  return def
}

/** Checks, before anything is spawned, that `typeName` is defined as seen from `cwd` (findAgentType). */
export async function checkAgentType(typeName: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<void> {
  findAgentType((await loadAgentDefinitions(options)).definitions, typeName)
}

/** The `*.md` files of one directory, by file name; a missing directory is simply empty. */
async function loadDir(dir: string, source: AgentSource, diagnostics: AgentDefinitionDiagnostic[]): Promise<AgentDefinition[]> {
  let names: string[]
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith('.md')).sort()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    diagnostics.push({ file: dir, message: `cannot read the directory: ${(err as Error).message}`, severity: 'error' })
    return []
  }
  const out: AgentDefinition[] = []
  const byName = new Map<string, string>()
  for (const name of names) {
    const file = path.join(dir, name)
    let text: string
    try {
      text = await fs.readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EISDIR') continue
      diagnostics.push({ file, message: `cannot read the file: ${(err as Error).message}`, severity: 'error' })
      continue
    }
    const parsed = parseAgentFile(file, text, source)
    diagnostics.push(...parsed.diagnostics)
    if (!parsed.definition) continue
    const first = byName.get(parsed.definition.name)
    if (first) {
      diagnostics.push({
        file,
        field: 'name',
        message: `name: ${parsed.definition.name} is already defined in ${first}; this file is ignored`,
        severity: 'error',
      })
      continue
    }
    byName.set(parsed.definition.name, file)
    out.push(parsed.definition)
  }
  return out
}
