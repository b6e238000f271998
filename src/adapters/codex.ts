/**
 * Codex (`@openai/codex`): its TUI runs with CODEX_HOME = the teammate's config dir, where swarm
 * writes config.toml (provider from OPENAI_BASE_URL as a Responses-API `model_providers` entry,
 * the cwd trusted, the `swarm mcp` server — its only way to the team —, the approval policy from
 * the swarm mode, the permission profile of its commands) and hooks.json
 * (SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, Stop → swarm hook).
 * `--no-daemon`: no background app-server outlives the pane. `--dangerously-bypass-hook-trust`:
 * the hooks are ours, written into a config dir no one else uses, so Codex's trust prompt is moot.
 */
import fs from 'node:fs'
import path from 'node:path'
import { teamWorktrees } from '../agent/member-sandbox.js'
import { agentHomesRoot, LEAD_KEY_FILE, rootDir, sentRoot } from '../home/paths.js'
import { loadPermissionSettings } from '../permissions/rules/settings.js'
import { pinSettings, pinnedHookFiles } from '../permissions/rules/settings-pin.js'
import { mountRuleReadOnly, PROJECT_CONFIG_DIR } from '../sandbox/protected.js'
import { strippedProviderVars } from '../sandbox/sandbox-settings.js'
import { atomicWriteFile, ensureDir } from '../util/fs.js'
import { commandHook, hookTable } from './hook-table.js'
import { RELAY_DIR } from './relay-frames.js'
import { CLAUDE_STYLE_HOOK_FIELDS, CTRL_C_TWICE, readHookFields } from './spec-adapter.js'
import { tomlDocument } from './toml.js'
import type { AdapterContext, AgentAdapter, HookReply, LaunchPlan, SwarmHookEvent } from './types.js'
import type { Verdict } from '../asks/types.js'

const HOOK_EVENTS = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'prompt-submit',
  PreToolUse: 'pre-tool',
  PermissionRequest: 'permission-request',
  PostToolUse: 'post-tool',
  Stop: 'stop',
} as const satisfies Record<string, SwarmHookEvent>

/**
 * swarm mode → Codex approval policy and permission profile. Codex 0.171 knows only `on-request`
 * (the model asks to leave the sandbox, and that request is the PermissionRequest swarm bubbles)
 * and `never`. Every mode runs its commands in PROFILE: bypassPermissions asks nothing (`never`),
 * as swarm's own agent in bypassPermissions asks nothing and still runs Bash in its sandbox — it
 * is not Codex's `:danger-full-access`, whose unasked commands wrote `.claude/hooks/` and read
 * `lead.key` (test/agents/codex-protected-config.test.ts).
 */
function policyFor(mode: string | undefined): { approval: string; permissions: string } {
  return { approval: mode === 'dontAsk' || mode === 'bypassPermissions' ? 'never' : 'on-request', permissions: PROFILE }
}

/** swarm's permission profile for Codex's sandboxed commands. */
const PROFILE = 'swarm'

/**
 * What its commands may touch: the workspace (its cwd) and a private TMPDIR are written; /tmp and
 * the inherited $TMPDIR only read (swarm's root may live there); swarm's root — the team's
 * permissions, tasks, config — only read; and not even that for the leads' keys, the teams'
 * inboxes, what the leads sent (`swarm-sent/`) and the relay tokens in the agent-CLI teammates'
 * homes. A deny holds for escalated commands too, so even a command you approve cannot read or
 * write an inbox: the teammate messages the team through `swarm mcp` alone (`teamChannel:
 * 'mcp'`), which Codex starts outside its sandbox and which writes through swarm's one send path
 * (test/agents/codex-sandbox.test.ts). Not the whole of `agent-homes/`: its own home is there,
 * and Codex's sandbox runs its helper from it (`tmp/arg0-linux/…`; a re-allow beneath a denied
 * directory is not honoured on Linux, and Codex did not start).
 *
 * Inside its writable cwd, what swarm's own sandbox makes read-only by mount rule
 * (sandbox/protected.ts `mountRuleReadOnly`) is read-only here too: the project's `.claude/` whole
 * (settings, hooks, skills, and `.claude/worktrees/`, so another member's worktree), every team
 * member's worktree `.git` and `.claude/`, and the files the settings' hooks name. Codex lets the
 * most specific entry decide, as bwrap's deepest mount does, so a Codex teammate in its own worktree
 * under `<repo>/.claude/worktrees/` still writes it. Unlike a deny, a read-only entry does not hold
 * for an escalated command (measured, Codex 0.171): such a write is asked of the lead, never done
 * unasked (test/agents/codex-protected-config.test.ts). A deny cannot stand in: it hides what it
 * covers from reads too, and a writable cwd beneath it is not honoured.
 */
function filesystem(env: NodeJS.ProcessEnv, tmp: string, readOnly: readonly string[]): Record<string, string> {
  const teams = path.join(rootDir(env), 'teams', '*')
  return {
    ':tmpdir': 'read',
    ':slash_tmp': 'read',
    ...Object.fromEntries(readOnly.map((p) => [p, 'read'])),
    [path.join(teams, LEAD_KEY_FILE)]: 'deny',
    // A glob denies the paths it matches, not what lies beneath them: each directory twice.
    ...denyTree(path.join(teams, 'inboxes')),
    [sentRoot(env)]: 'deny',
    ...denyTree(path.join(agentHomesRoot(env), '*', '*', RELAY_DIR)),
    [tmp]: 'write',
  }
}

const denyTree = (dir: string): Record<string, string> => ({ [dir]: 'deny', [path.join(dir, '**')]: 'deny' })

/**
 * The read-only paths of its profile: the mount rule over its cwd and the team's worktrees (read
 * when it starts: a member spawned later is covered by the project's `.claude/` in the usual
 * layout), and the files the hooks name — those that exist. The project's `.claude/` is made when
 * missing, as for every CLI teammate (adapters/confine.ts), so that settings or hooks created there
 * later are read-only too.
 */
async function protectedInCwd(ctx: AdapterContext, members: readonly string[], hookFiles: readonly string[]): Promise<string[]> {
  const rule = mountRuleReadOnly([ctx.cwd], members)
  await ensureDir(path.join(ctx.cwd, PROJECT_CONFIG_DIR))
  return [...new Set([...rule.configDirs, ...rule.gitPaths, ...hookFiles])].filter((p) => fs.existsSync(p))
}

async function prepare(ctx: AdapterContext): Promise<LaunchPlan> {
  await ensureDir(ctx.configDir)
  const baseUrl = ctx.env.OPENAI_BASE_URL
  const policy = policyFor(ctx.mode)
  const tmp = path.join(ctx.configDir, 'tmp')
  await ensureDir(tmp)
  // A denied directory made later could be missed: the ones not yet there are made now.
  await ensureDir(sentRoot(ctx.env))
  const [settings, members] = await Promise.all([loadPermissionSettings({ cwd: ctx.cwd, env: ctx.env }), teamWorktrees(ctx.team, ctx.env)])
  const { sandbox } = settings
  const readOnly = await protectedInCwd(ctx, members, pinnedHookFiles(pinSettings(settings, ctx.cwd, ctx.env.HOME || undefined)))
  const config = tomlDocument(
    {
      model: ctx.model,
      model_provider: baseUrl ? 'swarm-openai' : undefined,
      approval_policy: policy.approval,
      default_permissions: policy.permissions,
      check_for_update_on_startup: false,
    },
    [
      ...(baseUrl
        ? [
            [
              ['model_providers', 'swarm-openai'],
              { name: 'OpenAI-compatible (swarm)', base_url: baseUrl, env_key: 'OPENAI_API_KEY', wire_api: 'responses' },
            ] as [string[], Record<string, string>],
          ]
        : []),
      [['permissions', PROFILE], { extends: ':workspace' }],
      [['permissions', PROFILE, 'filesystem'], filesystem(ctx.env, tmp, readOnly)],
      [['projects', ctx.cwd], { trust_level: 'trusted' }],
      // Its commands never see the provider keys (Codex itself keeps them), unless sandbox.keepEnv says so.
      [['shell_environment_policy'], { exclude: strippedProviderVars(sandbox) }],
      // Codex's shell takes PATH from a login-shell snapshot: the spawner's is put back (no `swarm` shim in it).
      [['shell_environment_policy', 'set'], { PATH: ctx.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmp }],
      // The team tools only message and track tasks: Codex does not ask before each call.
      [['mcp_servers', 'swarm'], { command: ctx.mcpArgv[0], args: ctx.mcpArgv.slice(1), default_tools_approval_mode: 'approve' }],
      // Codex starts MCP servers with a minimal environment: swarm's root must be named.
      [['mcp_servers', 'swarm', 'env'], { SWARM_HOME: rootDir(ctx.env) }],
    ],
  )
  const configFile = path.join(ctx.configDir, 'config.toml')
  await atomicWriteFile(configFile, config)
  const hooks = hookTable(HOOK_EVENTS, commandHook(ctx, 's', false))
  const hooksFile = path.join(ctx.configDir, 'hooks.json')
  await atomicWriteFile(hooksFile, `${JSON.stringify({ hooks }, null, 2)}\n`)
  const argv = ['codex', '--no-daemon', '--dangerously-bypass-hook-trust', ...(ctx.resume ? ['resume', '--last'] : [ctx.firstPrompt])]
  // Read-only wherever it runs in swarm's sandbox (a user-defined adapter running Codex).
  return { argv, env: { CODEX_HOME: ctx.configDir }, readOnly: [configFile, hooksFile] }
}

/** The provider Codex is pointed at when swarm meters it: the Responses API at the metering proxy, its key from OPENAI_API_KEY. */
const METERED_PROVIDER = 'swarm-metered'
const meteredProvider = (url: string) =>
  `{ name = "OpenAI (metered by swarm)", base_url = ${JSON.stringify(url)}, env_key = "OPENAI_API_KEY", wire_api = "responses" }`

function answerPermission(event: SwarmHookEvent, answer: Verdict): HookReply {
  if (event === 'pre-tool') {
    // PreToolUse can only deny; an allowed call goes on to Codex's own approval (and PermissionRequest).
    if (answer.behavior === 'allow') return { exitCode: 0 }
    return {
      stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: answer.message ?? 'denied by the team lead' } })}\n`,
      exitCode: 0,
    }
  }
  const decision = answer.behavior === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: answer.message ?? 'denied by the team lead' }
  return { stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } })}\n`, exitCode: 0 }
}

export const codexAdapter: AgentAdapter = {
  kind: 'codex',
  description: 'OpenAI Codex CLI (Responses API); hooks in CODEX_HOME, MCP, --no-daemon',
  source: 'built-in',
  binary: 'codex',
  versionArgs: ['--version'],
  providerEnv: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'CODEX_*'],
  // Without a key its TUI stops at "Sign in with ChatGPT" (or, with OPENAI_BASE_URL, errors every turn): still answerable in the pane.
  requiredEnv: { anyOf: ['OPENAI_API_KEY'], without: 'warn' },
  // Measured: an Enter sooner than ~100 ms after the paste became a newline in the composer; settleMs is checked by
  // test/agents/codex.test.ts (describeAgentCli: "submits 20 messages … each exactly once").
  delivery: { method: 'paste', settleMs: 400, submitKeys: ['Enter'], confirm: 'hook' },
  states: { hooks: true },
  hookEvents: HOOK_EVENTS,
  quit: CTRL_C_TWICE,
  // Its own sandbox, under the permission profile prepare() writes. Not inside swarm's: Codex's
  // sandbox helper is a bwrap of its own, which cannot nest in swarm's here (as root it may not map
  // uid 0 without CAP_SETFCAP; in a container its /proc mount is refused), so Codex would not start.
  confinement: 'own',
  modelRoute: {
    api: 'openai-responses',
    baseUrlEnv: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    keyEnv: 'OPENAI_API_KEY',
    hideKey: true,
    // Its config.toml (written before the proxy's port is known) names the base URL: overridden on its command line.
    pointArgs: (url) => ['-c', `model_provider="${METERED_PROVIDER}"`, '-c', `model_providers.${METERED_PROVIDER}=${meteredProvider(url)}`],
  },
  // Its profile denies the inboxes to every command, approved ones too: it messages the team through swarm mcp.
  teamChannel: 'mcp',
  projectConfig: { dir: '.codex', protect: ['config.toml', 'hooks.json'] },
  configEnv: { CODEX_HOME: '.codex' },
  shellTools: ['Bash'],
  prepare,
  readHook: (_event, payload) => readHookFields(payload, CLAUDE_STYLE_HOOK_FIELDS),
  answerPermission,
}
