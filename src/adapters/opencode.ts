/**
 * opencode (`opencode-ai`): its TUI runs in the pane with `--port` and a server password, its
 * XDG config/data/cache/state dirs inside the teammate's config dir (opencode.json: the provider
 * at OPENAI_BASE_URL as an OpenAI-compatible Chat Completions provider, the `swarm mcp` server,
 * bash/edit set to "ask"). It has no command hooks: the pane wrapper reads its SSE event stream
 * (opencode-bridge.ts) for states and permissions, and the courier types into it over HTTP.
 */
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { rootDir } from '../home/paths.js'
import { OPENCODE_PASSWORD_ENV, OPENCODE_URL_ENV, freePort } from './opencode-api.js'
import { OPENCODE_QUIET_ENV, opencodeDirs, writeOpencodeConfigDir } from './opencode-home.js'
import { probeOpencode } from './opencode-probe.js'
import { opencodeChannel } from './opencode-bridge.js'
import { CLAUDE_STYLE_HOOK_FIELDS, CTRL_C_TWICE, readHookFields } from './spec-adapter.js'
import type { AdapterContext, AgentAdapter, LaunchPlan } from './types.js'
import type { Verdict } from '../asks/types.js'

export const OPENCODE_PROVIDER = 'swarm'

/** swarm mode → opencode's permission per tool kind (what is not listed opencode allows). */
function permissionFor(mode: string | undefined): Record<string, string> {
  // Edits are always "ask": the bridge's permission-request decides them by swarm's rules
  // (hook-rules.ts: acceptEdits allows the cwd, protected paths are asked, the control plane denied).
  if (mode === 'bypassPermissions') return { bash: 'allow', edit: 'ask' }
  if (mode === 'dontAsk') return { bash: 'deny', edit: 'deny' }
  return { bash: 'ask', edit: 'ask' }
}

async function prepare(ctx: AdapterContext): Promise<LaunchPlan> {
  const dirs = opencodeDirs(ctx.configDir)
  const baseUrl = ctx.env.OPENAI_BASE_URL
  const model = ctx.model ?? 'default'
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    ...(baseUrl && {
      model: `${OPENCODE_PROVIDER}/${model}`,
      provider: {
        [OPENCODE_PROVIDER]: {
          npm: '@ai-sdk/openai-compatible',
          name: 'OpenAI-compatible (swarm)',
          // opencode reads the key from the environment when it starts: it is never written here.
          options: { baseURL: baseUrl, apiKey: '{env:OPENAI_API_KEY}' },
          models: { [model]: { name: model, tool_call: true } },
        },
      },
    }),
    permission: permissionFor(ctx.mode),
    // The project's AGENTS.md, which OPENCODE_DISABLE_PROJECT_CONFIG (below) would leave out.
    instructions: [path.join(ctx.cwd, 'AGENTS.md')],
    mcp: { swarm: { type: 'local', command: ctx.mcpArgv, enabled: true, environment: { SWARM_HOME: rootDir(ctx.env) } } },
  }
  const readOnly = await writeOpencodeConfigDir(dirs.XDG_CONFIG_HOME, config)
  const port = await freePort()
  const argv = [
    'opencode',
    ctx.cwd,
    '--port',
    String(port),
    ...(baseUrl ? ['--model', `${OPENCODE_PROVIDER}/${model}`] : ctx.model ? ['--model', ctx.model] : []),
    ...(ctx.resume ? ['--continue'] : ['--prompt', ctx.firstPrompt]),
  ]
  return {
    argv,
    env: {
      ...dirs,
      ...OPENCODE_QUIET_ENV,
      // Never the project's opencode.json or .opencode/: created by another teammate, they would win
      // over this config (bash "allow", their own agents and plugins) and take the lead's gate off.
      OPENCODE_DISABLE_PROJECT_CONFIG: '1',
      [OPENCODE_URL_ENV]: `http://127.0.0.1:${port}`,
      // Its server then answers only whoever knows this (the pane wrapper): not any local process.
      [OPENCODE_PASSWORD_ENV]: randomBytes(18).toString('base64url'),
    },
    // opencode.json (permissions, the swarm MCP server) and where agents and plugins would load from.
    readOnly,
  }
}

/**
 * The reply the pane wrapper posts to `/permission/{id}/reply`: `once` even for swarm's "always".
 * opencode's `always` adds the request's `always` patterns (bash: the command's prefix, `git
 * status *`; edit: `*`) to its instance's approved rules and then stops asking for them, so those
 * calls would never reach swarm's rules again (protected paths, the control plane, a later deny).
 * swarm keeps "always" as its own rule instead (asks/always.ts).
 */
function answerPermission(_event: unknown, answer: Verdict) {
  const reply = answer.behavior === 'allow' ? { reply: 'once' } : { reply: 'reject', message: answer.message ?? 'denied by the team lead' }
  return { stdout: `${JSON.stringify(reply)}\n`, exitCode: 0 }
}

export const opencodeAdapter: AgentAdapter = {
  kind: 'opencode',
  description: 'opencode (Chat Completions); its HTTP API and SSE event stream, MCP',
  source: 'built-in',
  binary: 'opencode',
  versionArgs: ['--version'],
  providerEnv: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'GEMINI_API_KEY'],
  delivery: { method: 'http' },
  states: { hooks: false },
  channel: opencodeChannel,
  hookEvents: {},
  quit: CTRL_C_TWICE,
  prepare,
  readHook: (_event, payload) => readHookFields(payload, CLAUDE_STYLE_HOOK_FIELDS),
  // Its `edit` permission covers write, edit and patch; the metadata names `filepath`.
  fileTools: { edit: 'Edit' },
  shellTools: ['bash'],
  // opencode installs packages into a config directory it finds: not made when missing.
  projectConfig: {
    dir: '.opencode',
    protect: ['opencode.json', 'opencode.jsonc', 'plugin', 'plugins', 'agent', 'command', 'tool'],
    makeWhenMissing: false,
  },
  answerPermission,
  probe: probeOpencode,
}
