import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type Anthropic from '@anthropic-ai/sdk'
import type { ToolKind } from '../permissions/rules/tools.js'
import { UsageError } from '../errors.js'
import type { InboxMessage } from '../mailbox/types.js'
import { LEAD_NAME } from '../home/paths.js'
import { claudeLeadOf } from '../teams/claude-lead.js'
import { findMember, readTeam } from '../teams/team-store.js'
import { PermissionModeName } from '../permissions/rules/modes.js'
import { createModelClient } from './client.js'
import { scratchDirNote } from './definitions/built-in.js'
import { findAgentType, loadAgentDefinitions } from './definitions/load.js'
import { resolveToolsForAgent } from './definitions/tool-filter.js'
import { resolveModel } from './model.js'
import { firstLimit } from './budget.js'
import { loadCacheSetting } from './cache-settings.js'
import { readTeamBudget } from './team-budget.js'
import { buildSystemPrompt } from './prompt.js'
import { createOutput, type AgentOutput } from './render.js'
import { LeadGate, type LeadVerdict } from '../trust/gate.js'
import { teamLeadSigner, type LeadSignFn } from '../trust/sign.js'
import { TeammateRuntime, type RuntimeOptions, type TurnLog } from './runtime.js'
import { readMemberState } from '../store/member-state.js'
import { AgentStateFile } from './state.js'
import { allowAll, type AnyTool, type PermissionCheck } from './tool.js'
import type { StructuredMessage } from '../mailbox/messages.js'
import type { BashSandbox } from '../sandbox/types.js'
import { allTools } from './tool-registry.js'
import { createSendMessageTool } from './tools/send-message.js'
import { createTaskTools } from './tools/tasks.js'
import { readTranscript, rebuildConversation, Transcript, transcriptPath } from './transcript.js'
import { findWorktreeRecord, worktreeNotice } from '../worktrees/notice.js'
import { unsandboxed } from '../sandbox/unsandboxed.js'

/**
 * Model calls per turn when the agent definition does not set maxTurns: none, as in Claude Code's
 * interactive loop — a teammate works through an hours-long refactor in one turn. What bounds a
 * runaway turn is its budget (`--max-cost`, `--max-tokens`, the team's) and the lead (interrupt,
 * shutdown); a definition's `maxTurns` still cuts its turns short, reported as partial.
 */
export const DEFAULT_MAX_ITERATIONS = Number.POSITIVE_INFINITY

export interface StartAgentOptions {
  team: string
  name: string
  env?: NodeJS.ProcessEnv
  /** Overrides of the member's registered values. */
  model?: string
  mode?: string
  agentType?: string
  cwd?: string
  resume?: boolean
  /** Shared by in-process teammates; created from the environment otherwise. */
  client?: Anthropic
  output?: AgentOutput
  signal?: AbortSignal
  /** Extra tools (the lead's Agent and TaskStop). */
  extraTools?: AnyTool[]
  /** A last filter on the tool set (the lead's --coordinator keeps coordination tools only). */
  onlyKinds?: readonly ToolKind[]
  /** Builds the permission layer once the agent's pieces exist. Default: allow everything. */
  permissions?: (ctx: AgentAssembly) => PermissionLayer | Promise<PermissionLayer>
  verifyLead?: (entry: InboxMessage) => LeadVerdict | Promise<LeadVerdict>
  sign?: LeadSignFn
  /** Claude Code's `--lead-verify-key` (`<ms>.<key>`); default `$SWARM_CLAUDE_LEAD_VERIFY_KEY`. */
  leadVerifyKey?: string
  runtime?: Partial<Pick<RuntimeOptions, 'external' | 'route' | 'onControl' | 'autoClaimTasks'>>
  /** The member's budget, from its team entry (`swarm spawn`/`team create --max-cost/--max-tokens`). */
  maxCostUsd?: number
  maxTokens?: number
  /** Replaces the agent type's own prompt (the coordinator's). */
  definitionPrompt?: string
  leaderModel?: string
}

/** What the permissions layer may need to know about the agent it guards. */
export interface AgentAssembly {
  team: string
  name: string
  cwd: string
  env: NodeJS.ProcessEnv
  /** The mode it started in; the current one is `state.current.mode` (mode_set_request, plan approval change it). */
  mode: string
  state: AgentStateFile
  output: AgentOutput
  transcript: Transcript
  /** Shows the agent as `waiting` (for an answer) or back to `working`. */
  setStatus(status: 'waiting' | 'working', detail?: string): Promise<void>
  /** Checks team-lead's seal on a record it wrote as a file (the gate's key, as rotated): a forged answer or rule is refused. */
  checkRecord?: (kind: 'resolved' | 'always', record: Record<string, unknown>) => Promise<boolean>
}

/** The permissions layer of one agent: the check on every tool call, and the answers it waits for. */
export interface PermissionLayer {
  check: PermissionCheck
  /** A control message from team-lead whose signature verified (permission_response, plan_approval_response, team_permission_update…). */
  onControl?(message: StructuredMessage, entry: InboxMessage): void | Promise<void>
  /** Called when the agent exits: cancel what it still waits for. */
  close?(): Promise<void>
  /** Where the agent's Bash commands run: its sandbox, or `unsandboxed(why)` (every Bash call asked). */
  sandbox: BashSandbox
}

/**
 * Assembles a teammate (or the lead) from its team entry, its agent definition and the
 * environment: model, tools filtered in layers, system prompt, transcript (resumed with
 * --resume) and state file. Returns the runtime, not yet running.
 */
export async function assembleAgent(
  opts: StartAgentOptions,
): Promise<{ runtime: TeammateRuntime; model: string; tools: string[]; checkPermission: PermissionCheck }> {
  const env = opts.env ?? process.env
  const team = await readTeam(opts.team, env)
  const member = findMember(team, opts.name)
  const cwd = path.resolve(opts.cwd ?? member.cwd ?? process.cwd())
  const { definitions, diagnostics } = await loadAgentDefinitions({ cwd, env })
  const output = opts.output ?? createOutput({ agentColor: member.color })
  for (const d of diagnostics) output.warn(`agent definition ${d.file}${d.field ? ` (${d.field})` : ''}: ${d.message}`)

  const isLead = opts.name === LEAD_NAME
  const typeName = opts.agentType ?? (isLead ? 'general-purpose' : (member.agentType ?? 'general-purpose'))
  const def = findAgentType(definitions, typeName === 'team-lead' && !definitions.has(typeName) ? 'general-purpose' : typeName)
  const modeRaw = opts.mode ?? member.mode ?? def.permissionMode ?? 'default'
  const mode = PermissionModeName.safeParse(modeRaw)
  if (!mode.success) throw new UsageError(`unknown permission mode "${modeRaw}"`, { hint: `use one of ${PermissionModeName.options.join(', ')}` })
  const { model, source } = resolveModel({ spawnModel: opts.model ?? member.model, definitionModel: def.model, leaderModel: opts.leaderModel, env })

  const turnLog: TurnLog = { completedTaskIds: [], shutdownResponses: new Map() }
  const sign = opts.sign ?? (isLead ? await teamLeadSigner(opts.team, env) : undefined)
  const host = { team: opts.team, name: opts.name, color: member.color, env, turnLog, ...(sign ? { sign } : {}) }
  const available: AnyTool[] = [...allTools(), createSendMessageTool(host), ...createTaskTools(host), ...(opts.extraTools ?? [])]
  // The tool set depends on the mode (ExitPlanMode only in plan mode), which team-lead may change.
  const toolsByMode = new Map<string, AnyTool[]>()
  const toolsForMode = (m: string): AnyTool[] => {
    let set = toolsByMode.get(m)
    if (!set) {
      const parsed = PermissionModeName.safeParse(m)
      const filtered = resolveToolsForAgent(def, available, { isTeammate: !isLead, permissionMode: parsed.success ? parsed.data : mode.data })
      set = available.filter((t) => filtered.tools.includes(t.name) && (!opts.onlyKinds || opts.onlyKinds.includes(t.kind)))
      toolsByMode.set(m, set)
    }
    return set
  }
  const tools = toolsForMode(mode.data)

  let definitionPrompt = opts.definitionPrompt ?? def.systemPrompt
  let writableRoots: string[] | undefined
  if (def.writableTempDir) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), `swarm-${opts.name}-`))
    writableRoots = [dir]
    definitionPrompt += '\n\n' + scratchDirNote(dir)
  }
  const worktree = await findWorktreeRecord(opts.team, await fs.realpath(cwd).catch(() => cwd), env).catch(() => undefined)
  if (worktree) definitionPrompt += '\n\n' + worktreeNotice(worktree)
  const system = buildSystemPrompt({ team: opts.team, name: opts.name, members: team.members.map((m) => m.name), cwd, definitionPrompt, isLead })
  const { cache, diagnostics: cacheDiagnostics } = await loadCacheSetting(cwd, env)
  for (const d of cacheDiagnostics) output.warn(d)

  const transcript = new Transcript(transcriptPath(opts.team, opts.name, env))
  const messages = opts.resume ? rebuildConversation(await readTranscript(transcript.file)) : []
  // --resume continues the same agent: what it spent so far stays counted.
  const previous = await readMemberState(opts.team, opts.name, env).catch(() => undefined)
  const before = opts.resume ? previous : undefined
  // A raised budget (state.json, on --resume) beats what the flags, the config and the definition say.
  const budget = firstLimit(before?.budget, { maxCostUsd: opts.maxCostUsd, maxTokens: opts.maxTokens }, member, def)
  // A new run: its record starts afresh (what --resume carries over is in it).
  const state = new AgentStateFile({
    team: opts.team,
    name: opts.name,
    env,
    fresh: true,
    initial: {
      pid: process.pid,
      status: 'starting',
      model,
      modelSource: source,
      mode: mode.data,
      ...(before?.usage ? { usage: before.usage, costUsd: before.costUsd, turns: before.turns } : {}),
      ...(budget.maxCostUsd !== undefined || budget.maxTokens !== undefined ? { budget } : {}),
      // What the API said about a model's window holds for every run, resumed or not.
      ...(previous?.contextWindows ? { contextWindows: previous.contextWindows } : {}),
    },
  })
  await state.update({})
  await transcript.append({ kind: 'start', model, mode: mode.data, resume: Boolean(opts.resume), pid: process.pid })
  if (opts.resume) output.info(`resumed ${messages.length} messages from ${transcript.file}`)

  let runtimeRef: TeammateRuntime | undefined
  // Every order goes through the one gate (trust/gate), the lead's own answers included — and the
  // records the lead writes as files (resolved requests, "always" rules) are checked by its key.
  const gate = await LeadGate.open({
    team: opts.team,
    name: opts.name,
    env,
    ...(opts.leadVerifyKey !== undefined ? { claudeVerifyKey: opts.leadVerifyKey } : {}),
    claudeLed: claudeLeadOf(team) !== undefined,
  })
  const assembly: AgentAssembly = {
    ...(gate.checksRecords && { checkRecord: (kind: 'resolved' | 'always', record: Record<string, unknown>) => gate.verifyRecord(kind, record) }),
    team: opts.team,
    name: opts.name,
    cwd,
    env,
    mode: mode.data,
    state,
    output,
    transcript,
    setStatus: async (status, detail) => runtimeRef?.setStatus(status, detail),
  }
  const layer: PermissionLayer = opts.permissions
    ? await opts.permissions(assembly)
    : { check: allowAll, sandbox: unsandboxed('started without a permission layer (every call allowed)') }

  const runtime = new TeammateRuntime({
    team: opts.team,
    name: opts.name,
    cwd,
    env,
    client: opts.client ?? createModelClient(env),
    model,
    mode: mode.data,
    system,
    cache,
    budget,
    // The member's own spend is read from disk: written before it is read.
    teamBudget: () => readTeamBudget(opts.team, env, () => state.flushed()),
    tools,
    toolsForMode,
    maxIterations: def.maxTurns ?? DEFAULT_MAX_ITERATIONS,
    output,
    transcript,
    state,
    messages,
    turnLog,
    verifyLead: opts.verifyLead ?? ((e) => gate.acceptLeadOrder(e)),
    checkPermission: layer.check,
    // A key update is the gate's own business (it rotated when it verified it).
    onControl: (m, e) => (m.type === 'lead_key_update' ? undefined : layer.onControl?.(m, e)),
    onExit: () => layer.close?.(),
    ...(member.color ? { color: member.color } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(writableRoots ? { writableRoots } : {}),
    sandbox: layer.sandbox,
    ...opts.runtime,
  })
  runtimeRef = runtime
  return { runtime, model, tools: tools.map((t) => t.name), checkPermission: layer.check }
}
