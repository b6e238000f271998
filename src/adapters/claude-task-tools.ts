/**
 * Whether a Claude Code teammate has its task tools (TaskList, TaskGet, TaskUpdate, TaskCreate),
 * decided the way Claude Code 2.1.332 decides it (read off its binary, docs/claude-code.md):
 * off when `CLAUDE_CODE_ENABLE_TASKS` is false; else on for the models they were made for
 * (claude-opus-4-6 and older), and on the newer ones, its default among them, only when
 * `CLAUDE_CODE_ENABLE_TODO_TOOLS` is true. Its settings' `env` is put over its environment, so
 * `<CLAUDE_CONFIG_DIR>/settings.json` counts too. When they are off, its first prompt sends it
 * to `swarm tasks` in its shell (first-prompt.ts).
 */
import path from 'node:path'
import { z } from 'zod'
import { parseJsonFile, readFileIfExists } from '../util/fs.js'

/** The models Claude Code 2.1.332 gives its task tools whatever the environment says. */
const TASK_TOOL_MODELS = [
  'claude-3-opus',
  'claude-3-sonnet',
  'claude-3-haiku',
  'claude-3-5-sonnet',
  'claude-3-5-haiku',
  'claude-3-7-sonnet',
  'claude-opus-4-0',
  'claude-opus-4-1',
  'claude-opus-4-5',
  'claude-opus-4-6',
  'claude-opus-4-7',
  'claude-sonnet-4-0',
  'claude-sonnet-4-5',
  'claude-sonnet-4-6',
  'claude-haiku-4-5',
]

/** Its boolean variables: `1 true yes on` are true, `0 false no off` false, anything else unset. */
function envFlag(value: string | undefined): boolean | undefined {
  const v = value?.trim().toLowerCase()
  if (v === undefined) return undefined
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  return undefined
}

/** A model id of the list, with or without a date suffix (`claude-opus-4-6-20260101`). */
function hasTaskToolsByModel(model: string | undefined): boolean {
  if (!model) return false
  return TASK_TOOL_MODELS.some((m) => model === m || model.startsWith(`${m}-`) || model.startsWith(`${m}[`))
}

/** The rule itself, on the environment the teammate ends up with and the model it runs. */
export function claudeTaskToolsEnabled(env: Record<string, string | undefined>, model?: string): boolean {
  if (envFlag(env.CLAUDE_CODE_ENABLE_TASKS) === false) return false
  if (hasTaskToolsByModel(model ?? env.ANTHROPIC_MODEL)) return true
  return envFlag(env.CLAUDE_CODE_ENABLE_TODO_TOOLS) === true
}

const SettingsEnv = z.looseObject({ env: z.record(z.string(), z.unknown()).optional(), model: z.string().optional() })

/**
 * For a teammate launched with `launchEnv` (its whole environment) and `--model model`: its user
 * settings (`<configDir>/settings.json`) `env` and `model` taken over it, as Claude Code does. A
 * settings file that does not parse is a CorruptFileError naming it (Claude Code would not start either).
 */
export async function claudeTeammateHasTaskTools(o: {
  launchEnv: Record<string, string | undefined>
  configDir: string
  model?: string
}): Promise<boolean> {
  const file = path.join(o.configDir, 'settings.json')
  const text = await readFileIfExists(file)
  const settings = text === undefined ? {} : parseJsonFile(file, text, SettingsEnv)
  const fromSettings = Object.fromEntries(Object.entries(settings.env ?? {}).map(([k, v]) => [k, String(v)]))
  return claudeTaskToolsEnabled({ ...o.launchEnv, ...fromSettings }, o.model ?? settings.model)
}
