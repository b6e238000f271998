/**
 * Whether a Claude Code teammate has its task tools (TaskList, TaskGet, TaskUpdate, TaskCreate),
 * decided the way Claude Code 2.1.332 decides it (read off its binary, docs/claude-code.md):
 * off when `CLAUDE_CODE_ENABLE_TASKS` is false; else on for the models they were made for
 * (claude-opus-4-6 and older), and on the newer ones, its default among them, only when
 * `CLAUDE_CODE_ENABLE_TODO_TOOLS` is true. A model alias (`opus`, `sonnet[1m]`, `best`, `default`)
 * counts as the model it stands for on the teammate's provider. Its settings' `env` is put over its
 * environment, so `<CLAUDE_CONFIG_DIR>/settings.json` counts too. When they are off, its first
 * prompt sends it to `swarm tasks` in its shell (first-prompt.ts).
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

type Provider = 'first_party' | 'bedrock' | 'vertex' | 'foundry' | 'mantle' | 'anthropic_aws' | 'anthropic_google_cloud'

/** Its provider switches, in the order it reads them (none: the Anthropic API). */
const PROVIDER_ENV: ReadonlyArray<[string, Provider]> = [
  ['CLAUDE_CODE_USE_BEDROCK', 'bedrock'],
  ['CLAUDE_CODE_USE_FOUNDRY', 'foundry'],
  ['CLAUDE_CODE_USE_ANTHROPIC_AWS', 'anthropic_aws'],
  ['CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD', 'anthropic_google_cloud'],
  ['CLAUDE_CODE_USE_MANTLE', 'mantle'],
  ['CLAUDE_CODE_USE_VERTEX', 'vertex'],
]

/**
 * Its baked catalog's family aliases: the default target and the providers that differ, and the
 * variable that overrides each (`ANTHROPIC_DEFAULT_OPUS_MODEL`).
 */
const FAMILY_ALIASES: Readonly<Record<string, { env?: string; default: string; per?: Partial<Record<Provider, string>> }>> = {
  opus: { env: 'ANTHROPIC_DEFAULT_OPUS_MODEL', default: 'claude-opus-5-5' },
  sonnet: {
    env: 'ANTHROPIC_DEFAULT_SONNET_MODEL',
    default: 'claude-sonnet-5-5',
    per: { bedrock: 'claude-sonnet-4-5', mantle: 'claude-sonnet-5', anthropic_aws: 'claude-sonnet-4-6' },
  },
  haiku: {
    env: 'ANTHROPIC_DEFAULT_HAIKU_MODEL',
    default: 'claude-haiku-5-5',
    per: {
      bedrock: 'claude-haiku-4-5',
      vertex: 'claude-haiku-4-5',
      foundry: 'claude-haiku-4-5',
      mantle: 'claude-haiku-4-5',
      anthropic_aws: 'claude-haiku-4-5',
      anthropic_google_cloud: 'claude-haiku-4-5',
    },
  },
  fable: { default: 'claude-fable-5-2' },
}

/** Its default model on the Anthropic API when nothing names one (elsewhere swarm does not know it). */
const FIRST_PARTY_DEFAULT = 'claude-opus-5-5'

/** Its boolean variables: `1 true yes on` are true, `0 false no off` false, anything else unset. */
function envFlag(value: string | undefined): boolean | undefined {
  const v = value?.trim().toLowerCase()
  if (v === undefined) return undefined
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  return undefined
}

function providerOf(env: Record<string, string | undefined>): Provider {
  return PROVIDER_ENV.find(([name]) => envFlag(env[name]) === true)?.[1] ?? 'first_party'
}

/**
 * The model id `model` (a `--model` value, `ANTHROPIC_MODEL`, settings' `model`) stands for, as
 * Claude Code resolves it: `[1m]` dropped, `best` is `opus`, `opusplan` is `sonnet` outside plan
 * mode, a family alias its variable's value else the catalog's target on the provider, `default`
 * (or nothing) `ANTHROPIC_DEFAULT_MODEL` else the Anthropic API's default. Undefined: not known here.
 */
export function resolveClaudeModel(model: string | undefined, env: Record<string, string | undefined>): string | undefined {
  let m = model
    ?.trim()
    .toLowerCase()
    .replace(/\[[12]m\]$/, '')
  if (!m || m === 'default' || m === 'inherit') {
    const fromEnv = env.ANTHROPIC_DEFAULT_MODEL?.trim().toLowerCase()
    if (fromEnv && fromEnv !== 'default' && fromEnv !== 'inherit') return resolveClaudeModel(fromEnv, env)
    return providerOf(env) === 'first_party' ? FIRST_PARTY_DEFAULT : undefined
  }
  if (m === 'best') m = 'opus'
  if (m === 'opusplan') m = 'sonnet'
  const family = FAMILY_ALIASES[m]
  if (!family) return m
  const override = family.env ? env[family.env]?.trim() : undefined
  if (override) return override.toLowerCase().replace(/\[[12]m\]$/, '')
  return family.per?.[providerOf(env)] ?? family.default
}

/** A model id of the list, with or without a date suffix (`claude-opus-4-6-20260101`), or a Bedrock inference profile. */
function hasTaskToolsByModel(model: string | undefined): boolean {
  if (!model) return false
  if (model.includes('application-inference-profile')) return true
  return TASK_TOOL_MODELS.some((m) => model === m || model.startsWith(`${m}-`) || model.startsWith(`${m}@`))
}

/** The rule itself, on the environment the teammate ends up with and the model (or alias) it runs. */
export function claudeTaskToolsEnabled(env: Record<string, string | undefined>, model?: string): boolean {
  if (envFlag(env.CLAUDE_CODE_ENABLE_TASKS) === false) return false
  if (hasTaskToolsByModel(resolveClaudeModel(model ?? env.ANTHROPIC_MODEL, env))) return true
  return envFlag(env.CLAUDE_CODE_ENABLE_TODO_TOOLS) === true
}

const SettingsEnv = z.looseObject({ env: z.record(z.string(), z.unknown()).optional(), model: z.string().optional() })

/**
 * For a teammate launched with `launchEnv` (its whole environment) and `--model model`: its user
 * settings (`<configDir>/settings.json`) `env` and `model` taken over it, as Claude Code does
 * (`--model`, then `ANTHROPIC_MODEL`, then the settings' `model`). A settings file that does not
 * parse is a CorruptFileError naming it (Claude Code would not start either).
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
  const env = { ...o.launchEnv, ...fromSettings }
  return claudeTaskToolsEnabled(env, o.model ?? env.ANTHROPIC_MODEL ?? settings.model)
}
