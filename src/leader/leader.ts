import fs from 'node:fs'
import type Anthropic from '@anthropic-ai/sdk'
import { createModelClient, modelConfigured } from '../agent/client.js'
import { createOutput } from '../agent/render.js'
import { assembleAgent } from '../agent/start.js'
import { updateMemberState } from '../store/member-state.js'
import { coordinatorPrompt, workerScratchpadNote } from '../agent/subagents/coordinator-prompt.js'
import type { Delegation } from '../agent/subagents/delegation.js'
import { allowInScratchpad, ensureScratchpad } from '../agent/subagents/scratchpad.js'
import { createLeadDelegation } from '../agent/subagents/lead-session.js'
import { createBatchTool } from '../batch/batch-tool.js'
import type { PermissionCheck } from '../agent/tool.js'
import { transcriptPath } from '../agent/transcript.js'
import { createExecutor } from '../backends/registry.js'
import type { InProcessExecutor, ProcessState, TeammateMain } from '../backends/types.js'
import { createPermissionLayer } from '../permissions/requests/client.js'
import { teamLeadSigner } from '../trust/sign.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam, updateTeam } from '../teams/team-store.js'
import { claudeLeadOf } from '../teams/claude-lead.js'
import type { TeamFile } from '../teams/types.js'
import { hostedViews, teamBackend } from '../backends/team-backend.js'
import { hostedInProcess } from '../teams/hosting.js'
import { nextStopSignal } from '../process/handlers.js'
import { onAbort } from '../util/abort.js'
import { LeaderConsole } from './console.js'
import { acquireLeaderLock } from '../supervisor/leader-lock.js'
import { type TrustSettings, checkSettingsPins } from '../supervisor/settings-pins.js'
import { LeaderControl, stoppedWithKill } from './control.js'
import { type LeaderAnswerer, serveLeaderSocket } from './leader-socket.js'
import { TeammateViews } from './teammate-views.js'

/**
 * A team led by Claude Code has its lead: this pane (opened when `swarm spawn` adds a swarm agent)
 * says so and waits, reading nothing — consuming team-lead's inbox would hide the reports from it.
 */
async function standAside(o: LeaderOptions, pid: number): Promise<void> {
  const output = o.output ?? process.stdout
  output.write(
    `team ${o.team} is led by Claude Code (pid ${pid}); swarm runs no leader console on it. Watch it with: swarm inbox ${o.team} team-lead --follow\n`,
  )
  await nextStopSignal(o.signal)
}

/** How long in-process teammates get to finish when their leader leaves. */
const LEAVE_GRACE_MS = 3_000

export interface LeaderOptions {
  team: string
  env: NodeJS.ProcessEnv
  input?: NodeJS.ReadableStream
  output?: NodeJS.WritableStream & { isTTY?: boolean }
  /** Only the coordination tools for the lead agent (`--coordinator`). */
  coordinator?: boolean
  /** False when nobody answers at this console (requests are shown, not prompted). */
  answersHere?: boolean
  signal?: AbortSignal
  /** Answers `swarm status`/`swarm send` calls on the team's leader socket (leader-socket.ts); absent: no socket. */
  answerer?: LeaderAnswerer
  /** Asked when teammates it restarts in-process have settings changed since they started (see checkSettingsPins); absent: nothing is trusted. */
  trustSettings?: TrustSettings
}

/**
 * `swarm leader <team>`: the leader console, the lead agent when a model is configured, and —
 * for an in-process team — every teammate inside this process (resumed from its transcript).
 * Started again after a crash it re-adopts the team.
 */
export async function runLeader(o: LeaderOptions): Promise<void> {
  const config = await readTeam(o.team, o.env)
  // A team led by Claude Code: its lead reads team-lead's inbox, never a swarm leader console.
  const claudeLead = claudeLeadOf(config)
  if (claudeLead) return standAside(o, claudeLead.pid)
  // One leader per team: a second one is refused (exit 4) with the running one's pid.
  const lock = acquireLeaderLock(o.team, o.env)
  const output = o.output ?? process.stdout
  const warn = (line: string) => output.write(`swarm: warning: ${line}\n`)
  const socket = o.answerer
    ? await serveLeaderSocket(o.team, o.env, o.answerer, warn).catch((err: unknown) => {
        warn(`no leader socket (status and send run on their own): ${err instanceof Error ? err.message : String(err)}`)
        return undefined
      })
    : undefined
  try {
    await leadTeam(o, config)
  } finally {
    // Before the lock: the next leader, once it holds the lock, finds no socket of this one's serving.
    await socket?.close()
    lock.release()
  }
}

async function leadTeam(o: LeaderOptions, written: TeamFile): Promise<void> {
  const env = o.env
  const output = o.output ?? process.stdout
  // A team that never ran anywhere (`--no-start`, backend auto) runs in-process from now on: this
  // leader hosts its roster, and spawns from other shells ask it.
  const config = teamBackend(written)
    ? written
    : await updateTeam(
        o.team,
        (t) => {
          t.swarmBackend ??= 'in-process'
        },
        env,
      )
  const backend = teamBackend(config) ?? 'in-process'
  const sign = await teamLeadSigner(o.team, env)
  const client: Anthropic | undefined = modelConfigured(env) ? createModelClient(env) : undefined
  // A hosted team (`team create --hosted`): its teammates run here, each shown in a pane of its own.
  const viewsBackend = backend === 'in-process' && env.TMUX_PANE ? hostedViews(config) : undefined
  const views = viewsBackend ? new TeammateViews(o.team, viewsBackend, env, (line) => output.write(`swarm: warning: ${line}\n`)) : undefined
  const inProcess: InProcessExecutor | undefined =
    backend === 'in-process'
      ? createExecutor('in-process', { env, sign, ...(views && { outputFor: (name: string) => views.sink(name) }) })
      : undefined

  const inProcessMain =
    (name: string, opts: { resume: boolean }): TeammateMain =>
    async (ctx) => {
      // Its view goes when it ends, however it ends (killed, exited, crashed): no pane shows a dead screen as if it ran.
      if (views && inProcess) void inProcess.wait(ctx.agentId).then((s) => views.end(name, endedHow(s)))
      if (!client) {
        ctx.print('no model is configured: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible server)')
        return 2
      }
      const member = (await readTeam(o.team, env)).members.find((m) => m.name === name)
      const { runtime } = await assembleAgent({
        team: o.team,
        name,
        env,
        client,
        resume: opts.resume,
        signal: ctx.signal,
        output: createOutput({
          ...(views ? { stream: views.stream(name, member?.color), color: !env.NO_COLOR } : { stream: output, prefix: name }),
          ...(member?.color ? { agentColor: member.color } : {}),
        }),
        permissions: (a) => createPermissionLayer(a),
      })
      return runtime.run()
    }
  const control = new LeaderControl({
    team: o.team,
    env,
    backend,
    sign,
    ...(inProcess ? { inProcess, inProcessMain } : {}),
    ...(viewsBackend && { views: viewsBackend }),
  })

  // Wired before the first await below: a stop signal while the team starts is never lost.
  const abort = new AbortController()
  onAbort(o.signal, () => abort.abort())

  // An in-process team lives in this process: every teammate is (re)started here, resuming its
  // conversation — except those stopped with `swarm kill` (`team resume` names them; `swarm spawn`
  // starts them again) — and only with its settings as pinned, or trusted: the check `team resume` makes.
  const restart = inProcess ? config.members.filter((m) => m.name !== LEAD_NAME && hostedInProcess(config, m) && !stoppedWithKill(m)) : []
  await checkSettingsPins(o.team, restart, env, o.trustSettings)

  // Merged into team-lead's record, never over it: the lead agent (this process too) keeps its
  // model, usage and cost there, which its next --resume starts from.
  await updateMemberState(o.team, LEAD_NAME, { pid: process.pid, status: 'idle', detail: undefined }, env, { create: true })

  await control.startAllInProcess(restart.map((m) => ({ name: m.name, resume: fs.existsSync(transcriptPath(o.team, m.name, env)) })))

  let lead: Awaited<ReturnType<typeof assembleAgent>>['runtime'] | undefined
  let leadDone: Promise<number> | undefined
  let delegation: Delegation | undefined
  if (client) {
    // A one-off subagent's tool calls pass the lead's own permission layer (asked at this console).
    let leadCheck: PermissionCheck = () => ({ behavior: 'deny', message: 'the lead agent is not ready yet' })
    const coordinator = o.coordinator === true || config.swarmCoordinator === true
    const cwd = config.members[0]?.cwd ?? process.cwd()
    const scratchpad = coordinator ? await ensureScratchpad(o.team, env) : undefined
    const check: PermissionCheck = (tool, input, ctx) => leadCheck(tool, input, ctx)
    const { delegation: d, tools } = await createLeadDelegation(
      {
        team: o.team,
        parent: LEAD_NAME,
        cwd,
        env,
        client,
        checkPermission: scratchpad ? allowInScratchpad(check, scratchpad) : check,
        ...(scratchpad ? { coordinator: true, workerNote: workerScratchpadNote(scratchpad) } : {}),
        output: createOutput({ stream: output, prefix: 'subagent' }),
        deliver: (text) => lead?.notify(text),
        batchTool: createBatchTool({ client, env, parent: LEAD_NAME, output: createOutput({ stream: output, prefix: 'batch' }) }),
      },
      { spawnTeammate: (i) => control.spawn(i.name, i), stopTeammate: (name) => control.kill(name, {}) },
    )
    delegation = d
    const assembled = await assembleAgent({
      team: o.team,
      name: LEAD_NAME,
      env,
      client,
      signal: abort.signal,
      resume: fs.existsSync(transcriptPath(o.team, LEAD_NAME, env)),
      output: createOutput({ stream: output, prefix: 'lead' }),
      extraTools: tools,
      // `--coordinator`: the lead only assigns and talks, never executes; its prompt teaches the four phases.
      ...(scratchpad ? { onlyKinds: ['coordination'] as const, definitionPrompt: coordinatorPrompt({ scratchpad }) } : {}),
      permissions: (a) => createPermissionLayer(a),
      runtime: { external: true, autoClaimTasks: false },
    })
    lead = assembled.runtime
    leadCheck = assembled.checkPermission
    leadDone = lead.run()
  }

  const console_ = new LeaderConsole({
    team: o.team,
    env,
    input: o.input ?? process.stdin,
    output,
    control,
    ...(lead
      ? {
          lead: {
            deliver: (m) => {
              for (const e of m) delegation?.observe(e)
              lead!.deliver(m)
            },
            say: (t) => lead!.say(t),
            compact: (f) => lead!.compact(f),
          },
        }
      : {}),
    noLeadReason:
      'no model is configured for the lead agent: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible server); slash commands work without one (/help)',
    signal: abort.signal,
    ...(inProcess ? { teammatesInside: true } : {}),
    ...(o.answersHere === false ? { answersHere: false } : {}),
    // A script's or a CI job's stdin ends at once: the team must outlive it (stopped by `team delete` or a signal).
    ...(o.input === undefined && !process.stdin.isTTY ? { runPastInputEnd: true } : {}),
  })
  try {
    await console_.run()
  } finally {
    abort.abort()
    await leadDone
    await delegation?.close()
    if (inProcess) {
      // The team lives in this process: ask each teammate to finish (idle ones approve at once), then stop the rest.
      const ids = (await readTeam(o.team, env).catch(() => config)).members.filter((m) => m.name !== LEAD_NAME).map((m) => m.agentId)
      await Promise.all(ids.map((id) => inProcess.terminate(id, 'the leader is leaving', { timeoutMs: LEAVE_GRACE_MS }).catch(() => undefined)))
      await inProcess.killAll()
    }
    await views?.close()
    await updateMemberState(o.team, LEAD_NAME, { status: 'exited' }, env)
  }
}

/** How a hosted teammate ended, for the last line of its view: `exit 0`, `killed`, `crashed: …`. */
function endedHow(s: ProcessState): string {
  return s.state === 'exited' ? `exit ${s.code}` : 'reason' in s ? s.reason : s.state
}
