/**
 * Claude Code as a teammate (`--agent claude`): launched exactly as a Claude Code lead launches its
 * own (`--agent-id … --lead-verify-key <ms>.<key>`), with its own key derived from the team's
 * (trust/sign: its `lead_sig` holds for its inbox only), so it trusts swarm's signed answers and shutdowns; it reads and writes the team's inboxes itself.
 * It runs in swarm's sandbox through the launcher its own self-spawns go through (claude-launcher.ts).
 */
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { UsageError } from '../errors.js'
import { rootDir } from '../home/paths.js'
import { ensureTeamKeys, loadLeadPrivateKey } from '../trust/keys.js'
import { claudeVerifyKeyFor } from '../trust/sign.js'
import { findMember, readTeam } from '../teams/team-store.js'
import { requireAgentBinary } from './binary.js'
import { findClaudeSession } from './claude-session.js'
import { claudeTeammateHasTaskTools } from './claude-task-tools.js'
import { claudeFirstPrompt } from './first-prompt.js'
import { providerEnv } from './launch-plan.js'
import type { AdapterContext, AgentAdapter, HookReply, LaunchPlan } from './types.js'
import type { Verdict } from '../asks/types.js'

/** The environment variable naming the Claude Code binary (else `claude` on PATH). */
export const CLAUDE_BIN_ENV = 'SWARM_CLAUDE_BIN'
export const CLAUDE_INSTALL_HINT = 'install it with `npm install -g @anthropic-ai/claude-code`, or point SWARM_CLAUDE_BIN at its binary'

/** swarm's permission modes in Claude Code's words (`bubble` is how a Claude Code teammate always behaves). */
const MODES: Record<string, string> = {
  default: 'default',
  bubble: 'default',
  acceptEdits: 'acceptEdits',
  plan: 'plan',
  bypassPermissions: 'bypassPermissions',
  dontAsk: 'dontAsk',
}

/**
 * swarm's launcher for CLAUDE_CODE_PROCESS_WRAPPER (absolute and executable, as Claude Code requires):
 * it runs Claude Code's self-spawns in swarm's sandbox (claude-launcher.ts).
 */
export function claudeLauncherPath(): string {
  return fileURLToPath(new URL('../../bin/swarm-claude-launcher.js', import.meta.url))
}

/** The Claude Code binary: `$SWARM_CLAUDE_BIN`, else `claude` on PATH; exit 7 with the install command otherwise. */
export function findClaudeBinary(env: NodeJS.ProcessEnv): string {
  return requireAgentBinary(claudeAdapter, env)
}

/**
 * A name Claude Code addresses by the same file swarm uses: it maps every character outside
 * `[A-Za-z0-9_-]` to `-` (`w.1` reads `inboxes/w-1.json`), so such names are refused.
 */
export function checkClaudeAddressable(kind: 'team' | 'agent', name: string): void {
  const mapped = name.replace(/[^a-zA-Z0-9_-]/g, '-')
  if (mapped !== name) {
    throw new UsageError(`Claude Code cannot address the ${kind} ${JSON.stringify(name)}: it would use the file name ${JSON.stringify(mapped)}`, {
      hint: 'use only letters, digits, _ and - in names of Claude Code teams and teammates',
    })
  }
}

/** The teammate argv a Claude Code lead builds (checked against 2.1.332), after the binary. */
export function claudeTeammateFlags(o: {
  team: string
  name: string
  color: string
  parentSessionId: string
  verifyKey: string
  mode?: string
  model?: string
  agentType?: string
  resumeSessionId?: string
  /** Its ExitPlanMode asks the lead (a `plan_approval_request`) instead of just leaving plan mode. */
  planModeRequired?: boolean
}): string[] {
  const mode = o.planModeRequired ? 'plan' : (MODES[o.mode ?? 'default'] ?? 'default')
  return [
    '--agent-id',
    `${o.name}@${o.team}`,
    '--agent-name',
    o.name,
    '--team-name',
    o.team,
    '--agent-color',
    o.color,
    '--parent-session-id',
    o.parentSessionId,
    '--lead-verify-key',
    o.verifyKey,
    ...(o.agentType ? ['--agent-type', o.agentType] : []),
    // Always a mode: its interactive default (auto) needs a server-side classifier and blocks on a dialog without it.
    '--permission-mode',
    mode,
    ...(o.planModeRequired ? ['--plan-mode-required'] : []),
    ...(o.model ? ['--model', o.model] : []),
    ...(o.resumeSessionId ? ['--resume', o.resumeSessionId] : []),
  ]
}

async function prepareClaude(ctx: AdapterContext): Promise<LaunchPlan> {
  checkClaudeAddressable('team', ctx.team)
  checkClaudeAddressable('agent', ctx.name)
  const bin = findClaudeBinary(ctx.env)
  const config = await readTeam(ctx.team, ctx.env)
  const member = findMember(config, ctx.name)
  await ensureTeamKeys(ctx.team, ctx.env)
  const key = await loadLeadPrivateKey(ctx.team, ctx.env)
  const recorded = typeof member.sessionId === 'string' ? member.sessionId : undefined
  const sessionId = ctx.resume ? (recorded ?? (await findClaudeSession(rootDir(ctx.env), ctx.cwd, ctx.team, ctx.name))?.sessionId) : undefined
  const flags = claudeTeammateFlags({
    team: ctx.team,
    name: ctx.name,
    color: member.color ?? 'blue',
    parentSessionId: config.leadSessionId ?? randomUUID(),
    verifyKey: claudeVerifyKeyFor(key, ctx.name, Date.now()),
    ...(ctx.mode !== undefined && { mode: ctx.mode }),
    ...(ctx.model !== undefined && { model: ctx.model }),
    ...(member.agentType && member.agentType !== 'general-purpose' && { agentType: member.agentType }),
    ...(sessionId && { resumeSessionId: sessionId }),
    // A plan-mode member is gated as a Claude Code lead gates one: without the flag ExitPlanMode just leaves plan mode.
    ...((ctx.mode === 'plan' || member.planModeRequired === true) && { planModeRequired: true }),
  })
  const env = {
    CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1',
    CLAUDE_CONFIG_DIR: rootDir(ctx.env),
    // On its default model Claude Code turns TaskList/TaskCreate/TaskUpdate off for teammates; this
    // keeps the team's shared task list in its hands (the variable its changelog names).
    CLAUDE_CODE_ENABLE_TODO_TOOLS: '1',
    // Its Agent View daemon would adopt the teammate swarm supervises: swarm's alone.
    CLAUDE_CODE_DISABLE_AGENT_VIEW: '1',
    // Its own spawns (split-pane teammates, background sessions) run in swarm's sandbox (claude-launcher.ts).
    CLAUDE_CODE_PROCESS_WRAPPER: claudeLauncherPath(),
  }
  // Still off (CLAUDE_CODE_ENABLE_TASKS=0 in its environment or settings): its first message says to use `swarm tasks`.
  const taskTools = await claudeTeammateHasTaskTools({
    launchEnv: { ...providerEnv(claudeAdapter.providerEnv, ctx.env), ...env },
    configDir: rootDir(ctx.env),
    ...(ctx.model !== undefined && { model: ctx.model }),
  })
  const inboxPrompt = ctx.resume ? undefined : claudeFirstPrompt({ team: ctx.team, name: ctx.name, prompt: ctx.prompt, taskTools })
  return {
    // umask 077: what it creates in the pane (and its files under the team) is the user's alone.
    // Through swarm's launcher, as its own self-spawns: it and everything it runs, in-process
    // subagents included, inside swarm's sandbox (claude-launcher.ts).
    argv: ['/bin/sh', '-c', 'umask 077 && exec "$0" "$@"', process.execPath, claudeLauncherPath(), bin, ...flags],
    env,
    ...(inboxPrompt !== undefined && { inboxPrompt }),
  }
}

/** Claude Code's PreToolUse hook reply (used only if a user wires swarm hooks into it). */
function answerPermission(_event: string, answer: Verdict): HookReply {
  const reason = answer.message ?? (answer.behavior === 'allow' ? 'approved by the team lead' : 'denied by the team lead')
  const output = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: answer.behavior, permissionDecisionReason: reason } }
  return { stdout: `${JSON.stringify(output)}\n`, exitCode: 0 }
}

export const claudeAdapter: AgentAdapter = {
  kind: 'claude',
  description: 'Claude Code (2.1.332 tested) as a teammate on its own inbox, speaking the agent-teams protocol',
  source: 'built-in',
  binary: 'claude',
  binaryEnv: CLAUDE_BIN_ENV,
  installHint: CLAUDE_INSTALL_HINT,
  versionArgs: ['--version'],
  providerEnv: ['ANTHROPIC_*', 'CLAUDE_CODE_*', 'CLAUDE_CONFIG_DIR', 'AWS_*', 'GOOGLE_*', 'VERTEX_*', 'DISABLE_*'],
  delivery: { method: 'inbox' },
  states: { hooks: false },
  hookEvents: {},
  quit: { signal: 'SIGTERM', graceMs: 2_000 },
  // Confined by its launcher (claude-launcher.ts), not the agent-CLI wrapper's sandbox: its own team
  // protocol has it read and write its team's inboxes and tasks itself, which that sandbox hides.
  confinement: 'launcher',
  // Its key stays in its environment: Claude Code asks before using a key it has not approved.
  modelRoute: {
    api: 'anthropic-messages',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com',
    keyEnv: 'ANTHROPIC_API_KEY',
    hideKey: false,
  },
  ownsInbox: true,
  projectConfig: { dir: '.claude', protect: ['settings.json', 'settings.local.json', 'agents', 'commands', 'swarm-agents'] },
  configEnv: { CLAUDE_CONFIG_DIR: '.claude' },
  shellTools: ['Bash'],
  prepare: prepareClaude,
  preflight: ({ team, name }) => {
    checkClaudeAddressable('team', team)
    checkClaudeAddressable('agent', name)
  },
  readHook: () => ({}),
  answerPermission,
}
