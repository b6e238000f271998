import fs from 'node:fs'
import type Anthropic from '@anthropic-ai/sdk'
import { createModelClient, modelConfigured } from '../agent/client.js'
import { createOutput } from '../agent/render.js'
import { assembleAgent } from '../agent/start.js'
import { AgentStateFile, statePath } from '../agent/state.js'
import { runSubagent } from '../agent/subagent.js'
import { createLeadTools } from '../agent/tools/lead.js'
import type { PermissionCheck } from '../agent/tool.js'
import { transcriptPath } from '../agent/transcript.js'
import { createExecutor } from '../backends/registry.js'
import type { InProcessExecutor, TeammateMain } from '../backends/types.js'
import type { TeamFile } from '../teams/types.js'
import { createPermissionLayer } from '../permissions/requests/client.js'
import { leadSignerFor } from '../teams/messaging.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam } from '../teams/team-store.js'
import { teamBackend } from '../backends/team-backend.js'
import { LeaderConsole } from './console.js'
import { acquireLeaderLock } from '../supervisor/leader-lock.js'
import { LeaderControl } from './control.js'

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
}

/**
 * `swarm leader <team>`: the leader console, the lead agent when a model is configured, and —
 * for an in-process team — every teammate inside this process (resumed from its transcript).
 * Started again after a crash it re-adopts the team.
 */
export async function runLeader(o: LeaderOptions): Promise<void> {
  const config = await readTeam(o.team, o.env)
  // One leader per team: a second one is refused (exit 4) with the running one's pid.
  const lock = acquireLeaderLock(o.team, o.env)
  try {
    await leadTeam(o, config)
  } finally {
    lock.release()
  }
}

async function leadTeam(o: LeaderOptions, config: TeamFile): Promise<void> {
  const env = o.env
  const output = o.output ?? process.stdout
  const backend = teamBackend(config) ?? 'in-process'
  const sign = await leadSignerFor(o.team, env)
  const client: Anthropic | undefined = modelConfigured(env) ? createModelClient(env) : undefined
  const inProcess: InProcessExecutor | undefined = backend === 'in-process' ? createExecutor('in-process', { env, sign }) : undefined

  const inProcessMain =
    (name: string, opts: { resume: boolean }): TeammateMain =>
    async (ctx) => {
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
        output: createOutput({ stream: output, prefix: name, ...(member?.color ? { agentColor: member.color } : {}) }),
        permissions: (a) => createPermissionLayer(a),
      })
      return runtime.run()
    }
  const control = new LeaderControl({ team: o.team, env, backend, sign, ...(inProcess ? { inProcess, inProcessMain } : {}) })

  const leaderState = new AgentStateFile(statePath(o.team, LEAD_NAME, env), { pid: process.pid, status: 'idle' })
  await leaderState.update({})

  // An in-process team lives in this process: (re)start every teammate, resuming its conversation.
  if (inProcess) {
    for (const m of config.members) {
      if (m.name === LEAD_NAME) continue
      const resume = fs.existsSync(transcriptPath(o.team, m.name, env))
      await control.startInProcess(m.name, resume)
    }
  }

  const abort = new AbortController()
  o.signal?.addEventListener('abort', () => abort.abort(), { once: true })
  let lead: Awaited<ReturnType<typeof assembleAgent>>['runtime'] | undefined
  let leadDone: Promise<number> | undefined
  if (client) {
    // A one-off subagent's tool calls pass the lead's own permission layer (asked at this console).
    let leadCheck: PermissionCheck = () => ({ behavior: 'deny', message: 'the lead agent is not ready yet' })
    const tools = createLeadTools({
      spawnTeammate: (i) => control.spawn(i.name, i),
      stopTeammate: (name) => control.kill(name, {}),
      runSubagent: (i, signal) =>
        runSubagent({
          team: o.team,
          parent: LEAD_NAME,
          cwd: config.members[0]?.cwd ?? process.cwd(),
          env,
          client,
          ...i,
          checkPermission: (tool, input, ctx) => leadCheck(tool, input, ctx),
          signal,
          output: createOutput({ stream: output, prefix: 'subagent' }),
        }),
    })
    const assembled = await assembleAgent({
      team: o.team,
      name: LEAD_NAME,
      env,
      client,
      signal: abort.signal,
      resume: fs.existsSync(transcriptPath(o.team, LEAD_NAME, env)),
      output: createOutput({ stream: output, prefix: 'lead' }),
      extraTools: tools,
      // `--coordinator`: the lead only assigns and talks, never executes.
      ...(o.coordinator ? { onlyKinds: ['coordination'] as const } : {}),
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
    ...(lead ? { lead: { deliver: (m) => lead!.deliver(m), say: (t) => lead!.say(t), compact: (f) => lead!.compact(f) } } : {}),
    noLeadReason:
      'no model is configured for the lead agent: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible server); slash commands work without one (/help)',
    signal: abort.signal,
    ...(o.answersHere === false ? { answersHere: false } : {}),
  })
  try {
    await console_.run()
  } finally {
    abort.abort()
    await leadDone
    if (inProcess) {
      // The team lives in this process: ask each teammate to finish (idle ones approve at once), then stop the rest.
      const ids = (await readTeam(o.team, env).catch(() => config)).members.filter((m) => m.name !== LEAD_NAME).map((m) => m.agentId)
      await Promise.all(ids.map((id) => inProcess.terminate(id, 'the leader is leaving', { timeoutMs: LEAVE_GRACE_MS }).catch(() => undefined)))
      await inProcess.killAll()
    }
    await leaderState.update({ status: 'exited' })
  }
}
