import YAML from 'yaml'
import { z } from 'zod'
import { AGENT_COLORS } from '../../home/colors.js'
import { PermissionModeName } from '../../permissions/rules/modes.js'
import { isToolName } from '../tools/names.js'
import { parseHost } from '../../remote/host.js'
import type { AgentDefinition, AgentDefinitionDiagnostic, AgentSource } from './types.js'

/** Claude Code's older name for the Agent tool, still found in agent files. */
const TOOL_ALIASES: Record<string, string> = { Task: 'Agent' }

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** `Read, Grep` or `[Read, Grep]` → `['Read', 'Grep']`. */
const ToolList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (typeof v === 'string' ? v.split(',') : v).map((s) => s.trim()).filter(Boolean))

const PositiveInt = z.union([z.number(), z.string().regex(/^\d+$/, 'expected a whole number').transform(Number)]).pipe(z.number().int().positive())

/** Claude Code's frontmatter fields; others (memory, mcpServers, hooks, …) are kept and ignored. */
export const AgentFrontmatter = z.looseObject({
  name: z.string().regex(NAME_RE, 'use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit'),
  description: z.string().trim().min(1, 'must not be empty'),
  tools: ToolList.optional(),
  disallowedTools: ToolList.optional(),
  model: z.string().trim().min(1).optional(),
  permissionMode: PermissionModeName.optional(),
  maxTurns: PositiveInt.optional(),
  /** swarm's: the budget of an agent of this type, in USD and/or tokens. */
  maxCostUsd: z
    .union([z.number(), z.string().transform(Number)])
    .pipe(z.number().positive())
    .optional(),
  maxTokens: PositiveInt.optional(),
  isolation: z.literal('worktree').optional(),
  /** swarm's: run agents of this type on another machine (`user@host[:port]` or an ssh config Host; docs/remote.md). */
  host: z
    .string()
    .refine((h) => validHost(h), 'a host: user@host, user@host:port or a Host of your ssh config')
    .optional(),
  color: z.enum(AGENT_COLORS).optional(),
  /** swarm's: run this type with an agent CLI (codex, gemini, …) instead of swarm's own agent. */
  agent: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/, 'an adapter kind: lowercase letters, digits and -')
    .optional(),
})
export type AgentFrontmatter = z.output<typeof AgentFrontmatter>

export interface ParsedAgentFile {
  /** Undefined when the file has an error. */
  definition?: AgentDefinition
  diagnostics: AgentDefinitionDiagnostic[]
}

function validHost(h: string): boolean {
  try {
    parseHost(h)
    return true
  } catch {
    return false
  }
}

/** Splits `---\n<yaml>\n---\n<body>`; undefined when the text has no frontmatter. */
export function splitFrontmatter(text: string): { yaml: string; body: string } | undefined {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n?^---[ \t]*(?:\r?\n|$)/m.exec(text)
  if (m?.index !== 0) return undefined
  return { yaml: m[1] ?? '', body: text.slice(m[0].length) }
}

/** Parses one agent Markdown file. Never throws: problems come back as diagnostics. */
export function parseAgentFile(file: string, text: string, source: AgentSource): ParsedAgentFile {
  const diagnostics: AgentDefinitionDiagnostic[] = []
  const error = (message: string, field?: string): ParsedAgentFile => ({
    diagnostics: [...diagnostics, { file, field, message, severity: 'error' }],
  })
  const warn = (message: string, field?: string) => diagnostics.push({ file, field, message, severity: 'warning' })

  const parts = splitFrontmatter(text)
  if (!parts) return error('no YAML frontmatter: the file must start with a --- line')
  let raw: unknown
  try {
    raw = YAML.parse(parts.yaml)
  } catch (err) {
    return error(`invalid YAML frontmatter: ${(err as Error).message.split('\n')[0]}`)
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return error('the frontmatter must be a mapping of fields')
  const parsed = AgentFrontmatter.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const field = issue.path.length ? String(issue.path[0]) : undefined
    const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message
    return error(field ? `${field}: ${message}` : message, field)
  }
  const fm = parsed.data
  const systemPrompt = parts.body.trim()
  if (!systemPrompt) return error('the body (the system prompt) is empty')

  const tools = fm.tools && cleanToolList(fm.tools, 'tools', warn)
  const disallowedTools = fm.disallowedTools ? cleanToolList(fm.disallowedTools, 'disallowedTools', warn) : []
  return {
    definition: {
      name: fm.name,
      description: fm.description,
      ...(tools ? { tools } : {}),
      disallowedTools,
      ...(fm.model ? { model: fm.model } : {}),
      ...(fm.permissionMode ? { permissionMode: fm.permissionMode } : {}),
      ...(fm.maxTurns ? { maxTurns: fm.maxTurns } : {}),
      ...(fm.maxCostUsd ? { maxCostUsd: fm.maxCostUsd } : {}),
      ...(fm.maxTokens ? { maxTokens: fm.maxTokens } : {}),
      ...(fm.isolation ? { isolation: fm.isolation } : {}),
      ...(fm.host ? { host: parseHost(fm.host).spec } : {}),
      ...(fm.color ? { color: fm.color } : {}),
      ...(fm.agent ? { agent: fm.agent } : {}),
      systemPrompt,
      source,
      file,
    },
    diagnostics,
  }
}

/**
 * Keeps known tool names. `Bash(git:*)`-style argument patterns are not supported: in an
 * allow-list the entry is dropped (granting all of Bash would be wider than asked); in a
 * deny-list the whole tool is denied (narrower, so safe).
 */
function cleanToolList(list: string[], field: 'tools' | 'disallowedTools', warn: (message: string, field?: string) => void): string[] {
  const out: string[] = []
  for (const entry of list) {
    if (entry === '*') {
      out.push('*')
      continue
    }
    const paren = entry.indexOf('(')
    const base = paren > 0 ? entry.slice(0, paren).trim() : entry
    const name = TOOL_ALIASES[base] ?? base
    if (!isToolName(name)) {
      warn(`${field}: unknown tool ${JSON.stringify(entry)} ignored`, field)
      continue
    }
    if (paren > 0 && field === 'tools') {
      warn(`tools: argument patterns are not supported; ${JSON.stringify(entry)} ignored (list ${name} to allow all of it)`, field)
      continue
    }
    if (paren > 0) warn(`disallowedTools: argument patterns are not supported; all of ${name} is disallowed`, field)
    if (!out.includes(name)) out.push(name)
  }
  return out
}
