/**
 * Gemini CLI (`@google/gemini-cli`): GEMINI_CLI_HOME = the teammate's config dir, whose
 * `.gemini/settings.json` swarm writes — API-key auth (GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL), no
 * folder-trust dialog, the `swarm mcp` server, and hooks (SessionStart, BeforeAgent, BeforeTool,
 * AfterTool, AfterAgent, Notification, SessionEnd → swarm hook). Its hooks can deny a tool but not
 * grant one, so it runs with `--approval-mode yolo` and swarm is the one that asks: a BeforeTool
 * hook on its shell and file-writing tools bubbles each call to the lead (file writes first go
 * through swarm's rules) and denies what is denied — or what it could not ask about.
 */
import path from 'node:path'
import { rootDir } from '../home/paths.js'
import { atomicWriteFile, ensureDir } from '../util/fs.js'
import { commandHook, hookTable } from './hook-table.js'
import { CTRL_C_TWICE, readHookFields } from './spec-adapter.js'
import type { AdapterContext, AgentAdapter, HookFacts, LaunchPlan, SwarmHookEvent } from './types.js'

/**
 * Its file-writing tools: every call goes to swarm's rule engine in every mode (hook-rules.ts), so
 * a write to the control plane is denied and one to a protected path asked even in acceptEdits.
 */
const FILE_TOOLS = { write_file: 'Write', replace: 'Edit' } as const

/** Tools that change something: the shell is asked, unless the mode says otherwise; file writes always go through the rules. */
function gatedTools(mode: string | undefined): string {
  const writes = Object.keys(FILE_TOOLS)
  return (mode === 'bypassPermissions' ? writes : ['run_shell_command', ...writes]).join('|')
}

const HOOK_EVENTS = {
  SessionStart: 'session-start',
  BeforeAgent: 'prompt-submit',
  AfterTool: 'post-tool',
  AfterAgent: 'stop',
  Notification: 'notification',
  SessionEnd: 'session-end',
} as const satisfies Record<string, SwarmHookEvent>

async function prepare(ctx: AdapterContext): Promise<LaunchPlan> {
  const dir = path.join(ctx.configDir, '.gemini')
  await ensureDir(dir)
  const command = commandHook(ctx, 'ms', true)
  const hooks = hookTable(HOOK_EVENTS, command)
  hooks.BeforeTool = [{ hooks: [command('pre-tool')] }, { matcher: `^(${gatedTools(ctx.mode)})$`, hooks: [command('permission-request')] }]
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ui: { hideTips: true },
    hooksConfig: { enabled: true, notifications: false },
    hooks,
    mcpServers: { swarm: { command: ctx.mcpArgv[0], args: ctx.mcpArgv.slice(1), env: { SWARM_HOME: rootDir(ctx.env) }, trust: true } },
  }
  const settingsFile = path.join(dir, 'settings.json')
  await atomicWriteFile(settingsFile, `${JSON.stringify(settings, null, 2)}\n`)
  const argv = [
    'gemini',
    '--approval-mode',
    'yolo',
    ...(ctx.model ? ['--model', ctx.model] : []),
    ...(ctx.resume ? ['--resume', 'latest'] : ['--prompt-interactive', ctx.firstPrompt]),
  ]
  return { argv, env: { GEMINI_CLI_HOME: ctx.configDir, GEMINI_CLI_NO_RELAUNCH: 'true' }, readOnly: [settingsFile] }
}

function readHook(event: SwarmHookEvent, payload: unknown): HookFacts {
  const facts = readHookFields(payload, {
    sessionId: 'session_id',
    toolName: 'tool_name',
    toolInput: 'tool_input',
    prompt: 'prompt',
    lastAssistantText: 'prompt_response',
    message: 'message',
  })
  // AfterAgent repeats the prompt: it is not a submission.
  return event === 'stop' ? { ...facts, prompt: undefined } : facts
}

export const geminiAdapter: AgentAdapter = {
  kind: 'gemini',
  description: 'Gemini CLI (Gemini API); hooks in its settings.json, MCP, swarm asks before shell and file writes',
  source: 'built-in',
  binary: 'gemini',
  versionArgs: ['--version'],
  providerEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GEMINI_*'],
  // settings.json selects API-key auth: without a key it opens its auth dialog in the pane.
  requiredEnv: { anyOf: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], without: 'warn' },
  // Measured: an Enter within ~200–500 ms of the paste became a newline.
  delivery: { method: 'paste', settleMs: 600, submitKeys: ['Enter'], confirm: 'hook' },
  states: { hooks: true },
  hookEvents: { ...HOOK_EVENTS, BeforeTool: 'pre-tool' },
  fileTools: FILE_TOOLS,
  shellTools: ['run_shell_command'],
  projectConfig: { dir: '.gemini', protect: ['settings.json', 'extensions', 'policies', 'commands'] },
  // Its config dir is `$GEMINI_CLI_HOME/.gemini`.
  configEnv: { GEMINI_CLI_HOME: '.' },
  // Ctrl-C twice quits; it was seen to outlive its pane, so the session is reaped after.
  quit: CTRL_C_TWICE,
  prepare,
  readHook,
  answerPermission: (_event, answer) => ({
    stdout: `${JSON.stringify(answer.behavior === 'allow' ? { decision: 'allow' } : { decision: 'deny', reason: answer.message ?? 'denied by the team lead' })}\n`,
    exitCode: 0,
  }),
}
