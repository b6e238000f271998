import os from 'node:os'
import type { AgentAssembly, PermissionLayer } from '../../agent/start.js'
import type { AnyTool, ToolContext } from '../../agent/tool.js'
import { inputText, oneNeutralLine } from '../../asks/input-view.js'
import { errorMessage } from '../../errors.js'
import type { StructuredMessage } from '../../mailbox/messages.js'
import { LEAD_NAME, agentId, scratchpadDir } from '../../home/paths.js'
import { readTeam } from '../../teams/team-store.js'
import { PermissionModeName } from '../rules/modes.js'
import { AnswerBoard } from '../../asks/answer-board.js'
import { ask, type AskContext } from '../../asks/ask.js'
import { type AlwaysSealing, alwaysRules, rememberAlways } from '../../asks/always.js'
import type { Answer, Verdict } from '../../asks/types.js'
import { verdictOf } from '../../asks/verdict.js'
import { newRequestId } from '../../home/request-id.js'
import { controlPlaneOptions } from '../rules/control-plane.js'
import { evaluatePermission } from '../rules/evaluate.js'
import { memberSandbox } from '../../agent/member-sandbox.js'
import { bashSandboxQuery } from '../rules/sandbox-query.js'
import type { BashSandbox } from '../../sandbox/types.js'
import { runPermissionRequestHooks } from './hooks.js'
import { pinSettings, pinnedHookFiles, type SettingsPin } from '../rules/settings-pin.js'
import { planFilePath } from '../../home/paths.js'
import { requestPlanApproval, type PlanContext } from './plan.js'
import { loadPermissionSettings, type CliPermissionOptions, type LoadedSettings } from '../rules/settings.js'
import { permissionSuggestions } from '../rules/suggest.js'
import type { AllowedPath } from '../rules/types.js'
import { formatRuleValue, rulesFromUpdates, teamPathRule, toPermissionRules } from '../rules/updates.js'

export interface PermissionLayerOptions {
  /** Rules and extra directories from the command line (`--allow`, `--deny`, `--ask`, `--add-dir`). */
  cli?: Omit<CliPermissionOptions, 'mode'>
  /** Deny a request nobody answered after this long; default: wait until answered. */
  permissionTimeoutMs?: number
  /** Show a tmux display-message when a request is sent (default true). */
  notifyTmux?: boolean
  /** Where ExitPlanMode writes the plan (default `<root>/plans/<team>/<name>.md`). */
  planFile?: string
}

/**
 * A teammate's permission layer. Every tool call is evaluated against the agent's CURRENT mode
 * and its rules (settings, command line, the team's allowed paths, and the "always" rules of the
 * one always store: the member's and the team's); what needs asking goes to the PermissionRequest
 * hooks, then to team-lead through the one ask flow (asks/ask.ts), which every member kind uses.
 * ExitPlanMode asks team-lead to approve the plan.
 */
export async function createPermissionLayer(a: AgentAssembly, options: PermissionLayerOptions = {}): Promise<PermissionLayer> {
  const settings = await loadPermissionSettings({ cwd: a.cwd, env: a.env, ...(options.cli ? { cli: options.cli } : {}) })
  for (const d of settings.diagnostics) a.output.warn(d)
  return new TeammatePermissions(a, settings, options)
}

class TeammatePermissions implements PermissionLayer {
  private readonly teamDirs: AllowedPath[] = []
  private readonly board: AnswerBoard
  private readonly bubbling: PlanContext
  private readonly home: string
  private lastModeOutsidePlan: PermissionModeName
  readonly sandbox: BashSandbox
  /** The executable settings as they were when this member started (settings-pin.ts). */
  private readonly settingsPin: SettingsPin

  constructor(
    private readonly a: AgentAssembly,
    private readonly settings: LoadedSettings,
    options: PermissionLayerOptions,
  ) {
    this.home = a.env.HOME || os.homedir()
    this.board = new AnswerBoard({
      team: a.team,
      agent: a.name,
      env: a.env,
      warn: (l) => a.output.warn(l),
      ...(a.checkRecord && { checkRecord: a.checkRecord }),
    })
    const started = PermissionModeName.safeParse(a.mode)
    this.lastModeOutsidePlan = started.success && started.data !== 'plan' ? started.data : 'default'
    const ctx: AskContext = {
      asker: {
        team: a.team,
        name: a.name,
        env: a.env,
        setStatus: (s, d) => a.setStatus(s, d),
        info: (l) => a.output.info(l),
        warn: (l) => a.output.warn(l),
        ...(a.checkRecord && { checkRecord: a.checkRecord }),
      },
      board: this.board,
      notifyTmux: options.notifyTmux ?? true,
      waiting: { count: 0 },
      ...(options.permissionTimeoutMs !== undefined ? { timeoutMs: options.permissionTimeoutMs } : {}),
    }
    this.bubbling = {
      ...ctx,
      assembly: a,
      planFile: options.planFile ?? planFilePath(a.team, a.name, a.env),
      modeBeforePlan: () => this.lastModeOutsidePlan,
    }
    this.settingsPin = pinSettings(settings, a.cwd, this.home)
    this.sandbox = memberSandbox({
      config: settings.sandbox,
      cwd: a.cwd,
      env: a.env,
      label: a.name,
      team: a.team,
      readOnly: pinnedHookFiles(this.settingsPin),
      writableDirs: async () => {
        const team = await readTeam(this.a.team, this.a.env)
        return this.allowedPaths(team.teamAllowedPaths ?? []).map((p) => (typeof p === 'string' ? p : p.path))
      },
    })
  }

  /** Where acceptEdits passes edits besides the cwd, and where sandboxed Bash may write. */
  private allowedPaths(teamAllowed: readonly AllowedPath[]): AllowedPath[] {
    return [scratchpadDir(this.a.team, this.a.env), ...this.settings.additionalDirectories, ...teamAllowed, ...this.teamDirs]
  }

  check = async (tool: AnyTool, input: Record<string, unknown>, ctx: ToolContext): Promise<Verdict> => {
    const mode = this.currentMode()
    if (mode !== 'plan') this.lastModeOutsidePlan = mode
    const team = await readTeam(this.a.team, this.a.env)
    const teamAllowed = team.teamAllowedPaths ?? []
    const decision = evaluatePermission({
      toolName: tool.name,
      input,
      kind: tool.kind,
      mode,
      rules: [
        ...this.settings.rules,
        ...toPermissionRules(
          teamAllowed.map((p) => ({ behavior: 'allow' as const, rule: teamPathRule(p) })),
          'team',
        ),
        ...(await alwaysRules(this.a.team, this.a.name, this.a.env, this.sealing())),
      ],
      cwd: this.a.cwd,
      allowedPaths: this.allowedPaths(teamAllowed),
      ...this.controlPlane(),
      planFilePath: this.bubbling.planFile,
      home: this.home,
      denyRead: this.settings.sandbox.denyRead,
      // Judged by the sandbox the call will run in (a subagent's is its parent's), never by this layer's own.
      ...(tool.name === 'Bash' ? await bashSandboxQuery(ctx.sandbox, input) : {}),
    })
    if (decision.behavior === 'deny') {
      const hint = mode === 'plan' && decision.source === 'mode' ? ` Write your plan to ${this.bubbling.planFile} or pass it to ExitPlanMode.` : ''
      return { behavior: 'deny', message: decision.reason + hint }
    }
    if (tool.name === 'ExitPlanMode') {
      if (mode !== 'plan') return { behavior: 'deny', message: `you are not in plan mode (mode ${mode}); ExitPlanMode only leaves plan mode` }
      return requestPlanApproval(this.bubbling, String(input.plan ?? ''), ctx.toolUseId ?? '', ctx.signal)
    }
    if (decision.behavior === 'allow') return { behavior: 'allow' }
    // A read the runtime makes itself (compaction restore) asks nobody: what would be asked is not done.
    if (ctx.unattended) return { behavior: 'deny', message: `${decision.reason} (not asked: nobody answers for a read the runtime makes itself)` }
    return this.ask(tool, input, ctx, mode)
  }

  onControl = async (message: StructuredMessage): Promise<void> => {
    switch (message.type) {
      case 'permission_response': {
        const answer: Answer =
          message.subtype === 'success'
            ? {
                kind: 'approve',
                by: LEAD_NAME,
                ...(message.response?.updated_input ? { updatedInput: message.response.updated_input } : {}),
                ...(message.response?.permission_updates?.length ? { permissionUpdates: message.response.permission_updates, always: true } : {}),
              }
            : { kind: 'deny', by: LEAD_NAME, ...(message.error !== undefined ? { feedback: message.error } : {}) }
        if (!this.board.offer(message.request_id, 'permission', answer)) this.ignore(message.type, message.request_id)
        return
      }
      case 'plan_approval_response': {
        const answer: Answer = message.approved
          ? { kind: 'approve', by: LEAD_NAME, ...(message.permissionMode ? { permissionMode: message.permissionMode } : {}) }
          : { kind: 'deny', by: LEAD_NAME, ...(message.feedback !== undefined ? { feedback: message.feedback } : {}) }
        if (!this.board.offer(message.requestId, 'plan', answer)) this.ignore(message.type, message.requestId)
        return
      }
      case 'team_permission_update': {
        // A swarm lead kept these in the team's always store already; a Claude Code lead only sends them.
        const updates = rulesFromUpdates([message.permissionUpdate])
        await rememberAlways({ team: this.a.team }, [message.permissionUpdate], this.a.env, this.sealing())
        if (message.directoryPath) this.teamDirs.push({ path: message.directoryPath, ...(message.toolName ? { toolName: message.toolName } : {}) })
        this.a.output.info(`team rule from team-lead: ${updates.map((u) => `${u.behavior} ${formatRuleValue(u.rule)}`).join(', ') || '(none)'}`)
        return
      }
      default:
        return
    }
  }

  close = async (): Promise<void> => {
    await this.board.closeAll(`${this.a.name} exited while waiting`)
    await this.sandbox.close()
  }

  /** The control plane and protected paths, with the files the pinned hooks name. */
  private controlPlane() {
    const cp = controlPlaneOptions(this.a.cwd, this.a.env)
    return { ...cp, protectedPaths: [...cp.protectedPaths, ...pinnedHookFiles(this.settingsPin)] }
  }

  /** How this member reads the team's "always" files: checked by the lead's seal where the team seals them. */
  private sealing(): AlwaysSealing {
    const check = this.a.checkRecord
    if (!check) return {}
    return { check, onRefused: (file, kept) => this.a.output.warn(`refused ${file}: not sealed by team-lead${kept ? `; kept as ${kept}` : ''}`) }
  }

  private currentMode(): PermissionModeName {
    const m = PermissionModeName.safeParse(this.a.state.current.mode ?? this.a.mode)
    return m.success ? m.data : 'default'
  }

  private ignore(type: string, id: string): void {
    // The file and the message both carry an answer; the second copy is expected.
    if (this.board.wasAnswered(id)) return
    this.a.output.warn(`ignored ${type} for ${JSON.stringify(id)}: not a request ${this.a.name} is waiting on`)
  }

  private async ask(tool: AnyTool, input: Record<string, unknown>, ctx: ToolContext, mode: PermissionModeName): Promise<Verdict> {
    const id = newRequestId('permission')
    const suggestions = this.suggest(tool.name, input)
    const description = typeof input.description === 'string' && input.description ? input.description : tool.summarize(input)
    const hooks = this.settings.permissionRequestHooks
    if (hooks.length > 0) {
      const hook = await runPermissionRequestHooks(
        hooks,
        {
          hook_event_name: 'PermissionRequest',
          tool_name: tool.name,
          tool_input: input,
          ...(ctx.toolUseId ? { tool_use_id: ctx.toolUseId } : {}),
          cwd: this.a.cwd,
          permission_mode: mode,
          permission_suggestions: suggestions,
          team: this.a.team,
          agent: this.a.name,
          agent_id: agentId(this.a.name, this.a.team),
          request_id: id,
          description,
        },
        { cwd: this.a.cwd, env: this.a.env, signal: ctx.signal, sandbox: this.sandbox, pin: this.settingsPin },
      )
      for (const d of hook.diagnostics) this.a.output.warn(d)
      if (hook.behavior === 'allow') {
        this.a.output.info(`${tool.name} allowed by a PermissionRequest hook (${hook.hook?.file ?? 'settings'})`)
        return { behavior: 'allow', ...(hook.updatedInput ? { updatedInput: hook.updatedInput } : {}) }
      }
      if (hook.behavior === 'deny') return { behavior: 'deny', message: hook.message ?? 'denied by a PermissionRequest hook' }
    }
    const answer = await ask(
      this.bubbling,
      {
        kind: 'permission',
        toolName: tool.name,
        toolUseId: ctx.toolUseId ?? '',
        input,
        description,
        suggestions,
        summary: oneNeutralLine(inputText(input)),
      },
      { signal: ctx.signal, id },
    )
    return verdictOf(answer)
  }

  private suggest(toolName: string, input: Record<string, unknown>): unknown[] {
    try {
      return permissionSuggestions(toolName, input, { cwd: this.a.cwd, home: this.home })
    } catch (err) {
      this.a.output.warn(`no suggestion for ${toolName}: ${errorMessage(err)}`)
      return []
    }
  }
}
