/**
 * Qwen Code (`@qwen-code/qwen-code`, a Gemini CLI fork): QWEN_HOME = the teammate's config dir,
 * whose settings.json swarm writes — OpenAI-compatible auth (OPENAI_API_KEY, OPENAI_BASE_URL), no
 * update check, the `swarm mcp` server (trusted), and Claude-Code-style hooks (SessionStart,
 * UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, Stop, Notification, SessionEnd →
 * swarm hook). Its PermissionRequest hook can grant as well as deny, so it runs in its `default`
 * approval mode and every prompt it would show is bubbled to the lead (file writes first through
 * swarm's rules); under bypassPermissions it runs `yolo` and a PreToolUse hook still puts its file
 * writes through swarm's rules, as Gemini CLI's BeforeTool does.
 */
import path from 'node:path'
import { rootDir } from '../home/paths.js'
import { atomicWriteFile, ensureDir } from '../util/fs.js'
import { commandHook, hookTable } from './hook-table.js'
import { CLAUDE_STYLE_HOOK_FIELDS, CTRL_C_TWICE, readHookFields } from './spec-adapter.js'
import type { AdapterContext, AgentAdapter, HookFacts, HookReply, LaunchPlan, SwarmHookEvent } from './types.js'
import type { Verdict } from '../asks/types.js'

/** Its file-writing tools, decided by swarm's rule engine in every mode (hook-rules.ts). */
const FILE_TOOLS = { write_file: 'Write', edit: 'Edit', notebook_edit: 'Edit' } as const

/**
 * Its tools that run a shell command (`monitor` runs one in the background), always asked: its own
 * classifier would run those it judges read-only without a prompt, so without its hook.
 */
const ALWAYS_ASKED = ['run_shell_command', 'monitor'] as const

const HOOK_EVENTS = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'prompt-submit',
  PermissionRequest: 'permission-request',
  PostToolUse: 'post-tool',
  Stop: 'stop',
  Notification: 'notification',
  SessionEnd: 'session-end',
} as const satisfies Record<string, SwarmHookEvent>

async function prepare(ctx: AdapterContext): Promise<LaunchPlan> {
  await ensureDir(ctx.configDir)
  const bypass = ctx.mode === 'bypassPermissions'
  // Qwen Code counts hook timeouts in milliseconds.
  const command = commandHook(ctx, 'ms', true)
  const hooks = hookTable(HOOK_EVENTS, command)
  hooks.PreToolUse = [
    { hooks: [command('pre-tool')] },
    // yolo asks nothing: its file writes still go through swarm's rules (the control plane denied, protected paths asked).
    ...(bypass ? [{ matcher: `^(${Object.keys(FILE_TOOLS).join('|')})$`, hooks: [command('permission-request')] }] : []),
  ]
  const settings = {
    security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    // No follow-up suggestion: Enter on an empty prompt box would submit it, and it redraws the box as a turn ends.
    ui: { hideTips: true, enableUserFeedback: false, enableFollowupSuggestions: false },
    // Its team is swarm's: no peer messages from other Qwen sessions (their socket is refused in swarm's sandbox anyway).
    agents: { crossSessionMessaging: false },
    // Its bundled ripgrep comes without an execute bit from npm: the built-in search, without a warning box.
    tools: { useRipgrep: false, sandbox: false },
    // Its shell tools run what its own classifier calls read-only (`cat ~/.ssh/…`, `git log`) without a
    // prompt, so without its PermissionRequest hook: an ask rule makes each of them prompt, so the lead is asked.
    ...(bypass ? {} : { permissions: { ask: [...ALWAYS_ASKED] } }),
    hooks,
    mcpServers: { swarm: { command: ctx.mcpArgv[0], args: ctx.mcpArgv.slice(1), env: { SWARM_HOME: rootDir(ctx.env) }, trust: true } },
  }
  const settingsFile = path.join(ctx.configDir, 'settings.json')
  await atomicWriteFile(settingsFile, `${JSON.stringify(settings, null, 2)}\n`)
  const argv = [
    'qwen',
    // Without it a fresh home starts in `auto`, where a model classifier approves tools unasked.
    '--approval-mode',
    bypass ? 'yolo' : 'default',
    ...(ctx.model ? ['--model', ctx.model] : []),
    ...(ctx.resume ? ['--continue'] : ['--prompt-interactive', ctx.firstPrompt]),
  ]
  // One process: no relaunch of itself as a child with other Node flags; its own sandbox off
  // whatever the environment says (QWEN_SANDBOX beats settings.json), as swarm's holds it whole.
  return { argv, env: { QWEN_HOME: ctx.configDir, QWEN_CODE_NO_RELAUNCH: 'true', QWEN_SANDBOX: 'false' }, readOnly: [settingsFile] }
}

function readHook(_event: SwarmHookEvent, payload: unknown): HookFacts {
  const { prompt, ...facts } = readHookFields(payload, CLAUDE_STYLE_HOOK_FIELDS)
  // UserPromptSubmit also fires for the continuation after a tool result, with an empty prompt:
  // the turn going on, not a submission.
  return prompt ? { ...facts, prompt } : facts
}

/**
 * `permission-request` comes from PermissionRequest (and, under yolo, from a PreToolUse on a file
 * tool): one reply both read — `decision.behavior` for the first, `permissionDecision` for the other.
 */
function answerPermission(event: SwarmHookEvent, answer: Verdict): HookReply {
  const reason = answer.message ?? (answer.behavior === 'allow' ? 'approved by the team lead' : 'denied by the team lead')
  if (event === 'pre-tool') {
    if (answer.behavior === 'allow') return { exitCode: 0 }
    const out = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }
    return { stdout: `${JSON.stringify(out)}\n`, exitCode: 0 }
  }
  const decision = { behavior: answer.behavior, ...(answer.behavior === 'deny' && { message: reason }) }
  const out = { hookSpecificOutput: { decision, permissionDecision: answer.behavior, permissionDecisionReason: reason } }
  return { stdout: `${JSON.stringify(out)}\n`, exitCode: 0 }
}

export const qwenAdapter: AgentAdapter = {
  kind: 'qwen',
  description: 'Qwen Code (Chat Completions); hooks in its settings.json, MCP, its permission prompts bubbled to the lead',
  source: 'built-in',
  binary: 'qwen',
  versionArgs: ['--version'],
  providerEnv: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'QWEN_MODEL'],
  // settings.json selects OpenAI-compatible auth: without a key it opens its auth dialog in the pane.
  requiredEnv: { anyOf: ['OPENAI_API_KEY'], without: 'warn' },
  // A paste over 1000 characters or 10 lines becomes a "[Pasted Content N chars]" placeholder,
  // expanded on submit from state its prompt box loses when redrawn as a turn ends (then the
  // placeholder itself was submitted): pieces within that are inserted as text.
  delivery: { method: 'paste', settleMs: 600, submitKeys: ['Enter'], confirm: 'hook', chunk: { chars: 1000, lines: 10 } },
  states: { hooks: true },
  hookEvents: { ...HOOK_EVENTS, PreToolUse: 'pre-tool' },
  fileTools: FILE_TOOLS,
  shellTools: ALWAYS_ASKED,
  projectConfig: { dir: '.qwen', protect: ['settings.json', 'extensions', 'agents', 'commands', 'skills', 'hooks'] },
  configEnv: { QWEN_HOME: '.qwen' },
  // Ctrl-C twice quits (its SessionEnd hook says `exited`); then SIGTERM.
  quit: CTRL_C_TWICE,
  prepare,
  readHook,
  answerPermission,
}
