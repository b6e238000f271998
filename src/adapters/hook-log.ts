/**
 * `agents/<name>/hook-log.jsonl`: one line per hook a CLI teammate ran, appended by `swarm hook`
 * (O_APPEND, one write per line). Only the courier reads it: to confirm a submission (the
 * prompt's digest) and to see its session start. Prompts are stored as digests, never as text.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { agentDir } from '../home/paths.js'
import { FILE_MODE, ensureDir, readFileIfExists } from '../util/fs.js'
import { SWARM_HOOK_EVENTS } from './types.js'

export const HookLogEntry = z.looseObject({
  event: z.enum(SWARM_HOOK_EVENTS),
  at: z.number(),
  /** prompt-submit: digest of the normalized prompt (promptDigest). */
  digest: z.string().optional(),
  /** prompt-submit: its length in characters, for diagnostics. */
  length: z.number().optional(),
  tool: z.string().optional(),
})
export type HookLogEntry = z.infer<typeof HookLogEntry>

export function hookLogPath(team: string, name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentDir(team, name, env), 'hook-log.jsonl')
}

/**
 * The digest a prompt is matched by: CLIs normalise line endings, and some trim or add a trailing
 * newline, so those are normalised first.
 */
export function promptDigest(text: string): string {
  const normal = text.replace(/\r\n?/g, '\n').split(PASTE_START).join('').split(PASTE_END).join('').trim()
  return createHash('sha256').update(normal).digest('hex').slice(0, 32)
}

const PASTE_START = `${String.fromCharCode(27)}[200~`
const PASTE_END = `${String.fromCharCode(27)}[201~`

export async function appendHookLog(team: string, name: string, entry: HookLogEntry, env?: NodeJS.ProcessEnv): Promise<void> {
  const file = hookLogPath(team, name, env)
  await ensureDir(path.dirname(file))
  await fs.appendFile(file, `${JSON.stringify(entry)}\n`, { mode: FILE_MODE })
}

/** Every entry (a torn or foreign line is skipped: the log is advisory, its writers append whole lines). */
export async function readHookLog(team: string, name: string, env?: NodeJS.ProcessEnv): Promise<HookLogEntry[]> {
  const text = await readFileIfExists(hookLogPath(team, name, env))
  if (!text) return []
  const out: HookLogEntry[] = []
  for (const line of text.split('\n')) {
    if (!line) continue
    try {
      const parsed = HookLogEntry.safeParse(JSON.parse(line))
      if (parsed.success) out.push(parsed.data)
    } catch {
      // a line cut short by a crash mid-append: skip it, the next line is whole
    }
  }
  return out
}
