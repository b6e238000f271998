/**
 * pi (`@mariozechner/pi-coding-agent`): PI_CODING_AGENT_DIR = the teammate's config dir, with a
 * models.json naming an OpenAI-compatible (Chat Completions) provider at OPENAI_BASE_URL, and
 * swarm's extension (pi-extension.ts), which reports its states and asks the lead before bash,
 * edit and write run (bash only under acceptEdits, nothing under bypassPermissions). PI_OFFLINE=1:
 * no update or network check at start.
 */
import path from 'node:path'
import { atomicWriteFile, ensureDir } from '../util/fs.js'
import { piExtensionSource } from './pi-extension.js'
import { CLAUDE_STYLE_HOOK_FIELDS, CTRL_C_TWICE, readHookFields } from './spec-adapter.js'
import type { AdapterContext, AgentAdapter, LaunchPlan, SwarmHookEvent } from './types.js'

const EVENTS: SwarmHookEvent[] = ['session-start', 'prompt-submit', 'pre-tool', 'permission-request', 'stop', 'session-end']
export const PI_PROVIDER = 'swarm-openai'

function gatedTools(mode: string | undefined): string[] {
  if (mode === 'bypassPermissions') return []
  if (mode === 'acceptEdits') return ['bash']
  return ['bash', 'edit', 'write']
}

async function prepare(ctx: AdapterContext): Promise<LaunchPlan> {
  await ensureDir(path.join(ctx.configDir, 'extensions'))
  const model = ctx.model ?? 'default'
  const baseUrl = ctx.env.OPENAI_BASE_URL
  if (baseUrl) {
    const models = {
      providers: {
        [PI_PROVIDER]: {
          baseUrl,
          api: 'openai-completions',
          apiKey: 'OPENAI_API_KEY',
          compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
          models: [{ id: model }],
        },
      },
    }
    await atomicWriteFile(path.join(ctx.configDir, 'models.json'), `${JSON.stringify(models, null, 2)}\n`)
  }
  const hooks = Object.fromEntries(EVENTS.map((e) => [e, ctx.hookArgv(e)]))
  await atomicWriteFile(path.join(ctx.configDir, 'extensions', 'swarm-team.ts'), piExtensionSource(hooks, gatedTools(ctx.mode)))
  const argv = [
    'pi',
    ...(baseUrl ? ['--provider', PI_PROVIDER, '--model', model] : ctx.model ? ['--model', ctx.model] : []),
    ...(ctx.resume ? ['--continue'] : [ctx.firstPrompt]),
  ]
  return { argv, env: { PI_CODING_AGENT_DIR: ctx.configDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' } }
}

export const piAdapter: AgentAdapter = {
  kind: 'pi',
  description: 'pi coding agent (Chat Completions); a swarm extension reports states and asks before bash/edit/write',
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
  answerPermission: (_event, answer) => ({
    stdout: `${JSON.stringify({ decision: answer.behavior, ...(answer.message !== undefined && { message: answer.message }) })}\n`,
    exitCode: 0,
  }),
}
