/**
 * pi (`@mariozechner/pi-coding-agent`): PI_CODING_AGENT_DIR = the teammate's config dir, with a
 * models.json naming the provider the spawner's variables point at — Anthropic Messages
 * (`api: anthropic-messages`, ANTHROPIC_BASE_URL) or OpenAI Chat Completions (OPENAI_BASE_URL);
 * SWARM_PI_API chooses when both are set — and swarm's extension (pi-extension.ts), which reports
 * its states and asks the lead before bash runs (not under bypassPermissions); edit and write
 * go through swarm's rules in every mode (protected paths asked, acceptEdits allows the cwd). PI_OFFLINE=1: no update or network check at start.
 */
import path from 'node:path'
import { atomicWriteFile, ensureDir } from '../util/fs.js'
import { UsageError } from '../errors.js'
import { piExtensionSource } from './pi-extension.js'
import { CLAUDE_STYLE_HOOK_FIELDS, CTRL_C_TWICE, readHookFields } from './spec-adapter.js'
import type { AdapterContext, AgentAdapter, LaunchPlan, SwarmHookEvent } from './types.js'

const EVENTS: SwarmHookEvent[] = ['session-start', 'prompt-submit', 'pre-tool', 'permission-request', 'stop', 'session-end']
export const PI_PROVIDER = 'swarm-openai'
export const PI_ANTHROPIC_PROVIDER = 'swarm-anthropic'
/** Set to `anthropic-messages` or `openai-completions` to choose pi's API when both providers are configured. */
export const PI_API_ENV = 'SWARM_PI_API'
type PiApi = 'anthropic-messages' | 'openai-completions'

/**
 * The API pi speaks: SWARM_PI_API when set; else Anthropic Messages when ANTHROPIC_BASE_URL is set
 * and OPENAI_BASE_URL is not, Chat Completions when OPENAI_BASE_URL is, Anthropic when only
 * ANTHROPIC_API_KEY is; undefined (pi's own default) otherwise.
 */
export function piApi(env: NodeJS.ProcessEnv): PiApi | undefined {
  const chosen = env[PI_API_ENV]
  if (chosen) {
    if (chosen === 'anthropic-messages' || chosen === 'openai-completions') return chosen
    throw new UsageError(`${PI_API_ENV}=${chosen} is not an API pi speaks`, { hint: 'use anthropic-messages or openai-completions' })
  }
  if (env.ANTHROPIC_BASE_URL && !env.OPENAI_BASE_URL) return 'anthropic-messages'
  if (env.OPENAI_BASE_URL) return 'openai-completions'
  if (env.ANTHROPIC_API_KEY) return 'anthropic-messages'
  return undefined
}

/** The models.json provider entry for `api` at the spawner's base URL (none without a base URL). */
function providerEntry(api: PiApi | undefined, env: NodeJS.ProcessEnv, model: string): { id: string; entry?: Record<string, unknown> } | undefined {
  if (api === 'anthropic-messages') {
    // pi's Anthropic client appends /v1/messages to the base URL itself.
    if (!env.ANTHROPIC_BASE_URL) return { id: 'anthropic' }
    return { id: PI_ANTHROPIC_PROVIDER, entry: { baseUrl: env.ANTHROPIC_BASE_URL, api, apiKey: 'ANTHROPIC_API_KEY', models: [{ id: model }] } }
  }
  if (api === 'openai-completions' && env.OPENAI_BASE_URL) {
    const compat = { supportsDeveloperRole: false, supportsReasoningEffort: false }
    return { id: PI_PROVIDER, entry: { baseUrl: env.OPENAI_BASE_URL, api, apiKey: 'OPENAI_API_KEY', compat, models: [{ id: model }] } }
  }
  return undefined
}

/** Its file-writing tools: decided by swarm's rule engine in every mode (hook-rules.ts). */
const FILE_TOOLS = { edit: 'Edit', write: 'Write' } as const

/** bash is asked unless the mode says otherwise; the file tools always go through swarm's rules. */
function gatedTools(mode: string | undefined): string[] {
  const writes = Object.keys(FILE_TOOLS)
  return mode === 'bypassPermissions' ? writes : ['bash', ...writes]
}

async function prepare(ctx: AdapterContext): Promise<LaunchPlan> {
  await ensureDir(path.join(ctx.configDir, 'extensions'))
  const model = ctx.model ?? 'default'
  const provider = providerEntry(piApi(ctx.env), ctx.env, model)
  if (provider?.entry) {
    const models = { providers: { [provider.id]: provider.entry } }
    await atomicWriteFile(path.join(ctx.configDir, 'models.json'), `${JSON.stringify(models, null, 2)}\n`)
  }
  const hooks = Object.fromEntries(EVENTS.map((e) => [e, ctx.hookArgv(e)]))
  await atomicWriteFile(path.join(ctx.configDir, 'extensions', 'swarm-team.ts'), piExtensionSource(hooks, gatedTools(ctx.mode)))
  const argv = [
    'pi',
    ...(provider ? ['--provider', provider.id] : []),
    ...(provider?.entry ? ['--model', model] : ctx.model ? ['--model', ctx.model] : []),
    ...(ctx.resume ? ['--continue'] : [ctx.firstPrompt]),
  ]
  const readOnly = [path.join(ctx.configDir, 'extensions'), ...(provider?.entry ? [path.join(ctx.configDir, 'models.json')] : [])]
  return { argv, env: { PI_CODING_AGENT_DIR: ctx.configDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' }, readOnly }
}

export const piAdapter: AgentAdapter = {
  kind: 'pi',
  description: 'pi coding agent (Anthropic Messages or Chat Completions); a swarm extension reports states and asks before bash/edit/write',
  source: 'built-in',
  binary: 'pi',
  versionArgs: ['--version'],
  providerEnv: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'GEMINI_API_KEY', 'PI_*'],
  // Its config dir is fresh (no stored login): without a key it starts with no model to use.
  requiredEnv: { anyOf: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY'], without: 'warn' },
  delivery: { method: 'paste', settleMs: 300, submitKeys: ['Enter'], confirm: 'hook' },
  states: { hooks: true },
  hookEvents: {},
  quit: CTRL_C_TWICE,
  prepare,
  readHook: (_event, payload) => readHookFields(payload, CLAUDE_STYLE_HOOK_FIELDS),
  fileTools: FILE_TOOLS,
  shellTools: ['bash'],
  projectConfig: { dir: '.pi', protect: ['settings.json', 'extensions'] },
  configEnv: { PI_CODING_AGENT_DIR: '.pi/agent' },
  answerPermission: (_event, answer) => ({
    stdout: `${JSON.stringify({ decision: answer.behavior, ...(answer.message !== undefined && { message: answer.message }) })}\n`,
    exitCode: 0,
  }),
}
