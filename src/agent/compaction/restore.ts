import type Anthropic from '@anthropic-ai/sdk'
import { type PendingRequest, listPending } from '../../asks/store.js'
import { listTasks } from '../../tasks/task-store.js'
import { readTeam } from '../../teams/team-store.js'

/**
 * What a compacted conversation gets back besides its summary: the files read most recently
 * (at most 5, each cut to 5k tokens, read again as they are now through the Read tool's guard) and the team context
 * (members, tasks, this agent's open permission requests).
 */

export const RESTORED_FILES = 5
export const RESTORED_FILE_TOKENS = 5_000

/**
 * The paths of the last distinct files the conversation read with Read, most recent first — only
 * reads that succeeded (their tool result is there and not an error): a denied Read names nothing.
 */
export function recentlyReadFiles(messages: readonly Anthropic.MessageParam[], limit = RESTORED_FILES): string[] {
  const succeeded = new Set<string>()
  for (const m of messages) {
    if (m.role !== 'user' || typeof m.content === 'string') continue
    for (const b of m.content) if (b.type === 'tool_result' && b.is_error !== true) succeeded.add(b.tool_use_id)
  }
  const out: string[] = []
  for (let i = messages.length - 1; i >= 0 && out.length < limit; i--) {
    const m = messages[i]!
    if (m.role !== 'assistant' || typeof m.content === 'string') continue
    for (const b of [...m.content].reverse()) {
      if (b.type !== 'tool_use' || b.name !== 'Read' || !succeeded.has(b.id)) continue
      const file = (b.input as { file_path?: unknown }).file_path
      if (typeof file === 'string' && !out.includes(file) && out.length < limit) out.push(file)
    }
  }
  return out
}

/** Reads a file for the model through the one guard (readForModel); a failure or denial is an error result. */
export type ModelFileReader = (file: string) => Promise<{ content: string; isError?: boolean }>

/**
 * One text part per file the guard lets the model read now (checked again: a rule added since, or
 * a file moved into the control plane, keeps it out), cut to RESTORED_FILE_TOKENS (4 characters a token).
 */
export async function restoreFiles(files: string[], read: ModelFileReader): Promise<string[]> {
  const parts: string[] = []
  const maxChars = RESTORED_FILE_TOKENS * 4
  for (const file of files) {
    const result = await read(file)
    if (result.isError) continue
    const text = result.content
    const body = text.length > maxChars ? `${text.slice(0, maxChars)}\n… [cut at ${RESTORED_FILE_TOKENS} tokens; Read it for the rest]` : text
    parts.push(`Recently read file ${file} (as it is now):\n<file path=${JSON.stringify(file)}>\n${body}\n</file>`)
  }
  return parts
}

/** The team as it stands: members, tasks, and the permission requests this agent waits on. */
export async function teamContext(team: string, name: string, env: NodeJS.ProcessEnv): Promise<string> {
  const [config, tasks, pending] = await Promise.all([
    readTeam(team, env).catch(() => undefined),
    listTasks(team, env).catch(() => []),
    openRequests(team, name, env),
  ])
  const lines = [`Team "${team}"; you are "${name}".`]
  if (config) lines.push(`Members: ${config.members.map((m) => m.name).join(', ')}.`)
  lines.push(tasks.length ? 'Tasks:' : 'Tasks: none.')
  for (const t of tasks)
    lines.push(
      `- #${t.id} [${t.status}]${t.owner ? ` (${t.owner})` : ''} ${t.subject}${t.blockedBy.length ? ` — blocked by ${t.blockedBy.map((b) => `#${b}`).join(', ')}` : ''}`,
    )
  if (pending.length) {
    lines.push('Your open permission requests:')
    for (const p of pending) lines.push(`- ${p.toolName}: ${p.description}`)
  }
  return lines.join('\n')
}

/**
 * This agent's pending permission requests, through the one request store (asks/store
 * `listPending`: what it lists, the request flow uses; a corrupt file is kept aside there, never
 * deleted). A store it cannot read leaves the summary without them: this is context, not the flow.
 */
async function openRequests(team: string, name: string, env: NodeJS.ProcessEnv): Promise<PendingRequest[]> {
  const { requests } = await listPending(team, { env }).catch(() => ({ requests: [] as PendingRequest[] }))
  return requests.filter((r) => r.agent === name)
}
