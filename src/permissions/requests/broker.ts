import os from 'node:os'
import { ConflictError, NotFoundError, type SwarmError, errorMessage } from '../../errors.js'
import { encodeStructured, type StructuredMessage } from '../../mailbox/messages.js'
import { sendTeamMessage } from '../../teams/messaging.js'
import { launchRecordCheck, leadRecordSeal } from '../../teams/lead-records.js'
import { LEAD_NAME } from '../../home/paths.js'
import { readTeam, updateTeam } from '../../teams/team-store.js'
import { sightedProcessGone } from '../../process/liveness.js'
import { teammateOf } from '../../home/member-marker.js'
import { sanitize } from '../../asks/notify.js'
import { inputText, neutralLines, oneNeutralLine } from '../../asks/input-view.js'
import {
  cancelDeadRequests,
  cancelRequest,
  cancelledSince,
  listPending,
  readPending,
  readResolved,
  resolveRequest,
  resolveRequestId,
  type PendingRequest,
  type ResolvedRequest,
} from '../../asks/store.js'
import { formatRuleValue, rulesFromUpdates, ruleDirectory, suggestionStrings, type RuleUpdate } from '../rules/updates.js'
import { type AlwaysSealing, rememberAlways } from '../../asks/always.js'
import type { GivenAnswer } from '../../asks/types.js'
import { validateRequestId } from '../../home/request-id.js'
import { importInboxRequests } from './inbox-requests.js'
import { approvedRequest, claudePlanDigest } from '../../mailbox/answer-binding.js'

/**
 * The leader side of permission requests, usable from any process (the leader console, `swarm
 * perms` in any shell, a policy script): the pending files are the durable truth, so a restarted
 * leader simply lists them again. Answers are recorded in `resolved/` (exactly one wins) and
 * sent to the teammate as a message signed by team-lead.
 */

/** A request as the human sees it. */
export interface BrokerRequest {
  id: string
  kind: 'permission' | 'plan'
  agent: string
  agentId: string
  toolName: string
  input: Record<string, unknown>
  /**
   * The whole input on one neutralised line (the plan's first line for a plan): never cut here —
   * a place that must be short cuts it with `clipped`, which says so.
   */
  summary: string
  /** The whole input (the whole plan), neutralised, line by line: what a prompt and `/show` print. */
  inputLines: string[]
  description: string
  /** Rule strings an "always" answer would add, e.g. `Bash(npm test:*)`. */
  suggestions: string[]
  createdAt: number
  ageMs: number
  pid?: number
  planFilePath?: string
}

export interface RequestListing {
  requests: BrokerRequest[]
  /**
   * Requests of dead teammates, cancelled and cleared by this listing — and, with
   * `recentCancelledMs`, those swarm cancelled that recently (the leader's sweep, another shell).
   */
  cancelled: Array<{ id: string; agent: string; toolName: string; kind: string; reason: string; cancelledAt: number }>
  /** Files that did not parse (moved aside). */
  problems: string[]
}

/**
 * False only when the teammate that asked is surely gone: its pid, start time and pid namespace
 * are on file and this process, in that namespace, sees it dead or replaced. A request without
 * them, or looked at from a sandbox's own pid namespace, is presumed alive.
 */
export function requesterAlive(r: PendingRequest): boolean {
  if (r.pid === undefined || r.pidStarted === undefined || r.pidNs === undefined) return true
  return !sightedProcessGone({ pid: r.pid, started: r.pidStarted, pidNs: r.pidNs })
}

/** A teammate's environment never cancels requests (a guard; the lead's listing does it). */
function maySweep(env: NodeJS.ProcessEnv | undefined): boolean {
  return teammateOf(env ?? process.env) === undefined
}

/**
 * Every pending request of the team, oldest first. Requests whose teammate is dead are
 * cancelled (recorded in `resolved/`, removed from `pending/`) and reported in `cancelled`.
 */
export async function listRequests(
  team: string,
  options: { env?: NodeJS.ProcessEnv; now?: number; recentCancelledMs?: number } = {},
): Promise<RequestListing> {
  const config = await readTeam(team, options.env) // an unknown team is a NotFoundError, not an empty list
  await importInboxRequests(config, options.env) // Claude Code teammates' requests live only in team-lead's inbox
  const swept = maySweep(options.env) ? await cancelDeadRequests(team, requesterAlive, { env: options.env, resolvedBy: 'swarm' }) : []
  const since = options.recentCancelledMs === undefined ? undefined : (options.now ?? Date.now()) - options.recentCancelledMs
  const earlier = since === undefined ? [] : await cancelledSince(team, since, { env: options.env, resolvedBy: 'swarm' })
  const dead = [...earlier.filter((e) => !swept.some((d) => d.id === e.id)), ...swept]
  const { requests, problems } = await listPending(team, { env: options.env, ...(options.now !== undefined ? { now: options.now } : {}) })
  return {
    requests: requests.map((r) => {
      const whole = r.kind === 'plan' ? String(r.input.plan ?? '') : inputText(r.input)
      return {
        id: r.id,
        kind: r.kind,
        agent: r.agent,
        agentId: r.agentId,
        toolName: r.toolName,
        input: r.input,
        // Display fields: the model wrote them, so no escape sequence may reach a terminal.
        summary: r.kind === 'plan' ? oneNeutralLine(firstLine(whole)) : oneNeutralLine(whole),
        inputLines: neutralLines(whole),
        description: sanitize(r.description),
        suggestions: suggestionStrings(r.suggestions),
        createdAt: r.createdAt,
        ageMs: r.ageMs,
        ...(r.pid !== undefined ? { pid: r.pid } : {}),
        ...(typeof r.planFilePath === 'string' ? { planFilePath: r.planFilePath } : {}),
      }
    }),
    cancelled: dead.map((d) => ({
      id: d.id,
      agent: d.agent,
      toolName: d.toolName,
      kind: d.kind,
      reason: d.feedback ?? 'cancelled',
      cancelledAt: d.resolvedAt,
    })),
    problems: problems.map((p) => p.message),
  }
}

export interface AnswerResult {
  request: ResolvedRequest
  /** False when the message could not be sent; the teammate still finds the answer in `resolved/`. */
  delivered: boolean
  deliveryError?: string
  /** Rules broadcast to the team (scope team). */
  teamRules: string[]
  /** Directories added to the team's teamAllowedPaths. */
  teamPaths: string[]
}

/**
 * Answers a pending request (the ask flow's GivenAnswer: approve — once, always for the member, or
 * with scope team always for every member — or deny; `by` is recorded, default `<user> via swarm
 * perms`), named by its id, short id or a unique prefix (request-id.ts: an
 * ambiguous one is a UsageError naming the candidates). NotFoundError (exit 3) for an unknown id; ConflictError (exit 4) when
 * it was answered already (saying by whom and how) or its teammate died (then it is cancelled).
 */
export async function answerRequest(
  team: string,
  query: string,
  answer: GivenAnswer,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<AnswerResult> {
  const env = options.env
  validateRequestId(query)
  const config = await readTeam(team, env)
  await importInboxRequests(config, env)
  const id = await resolveRequestId(team, query, env)
  const pending = await readPending(team, id, env)
  if (pending && maySweep(env) && !requesterAlive(pending)) {
    try {
      await cancelRequest(team, id, `${pending.agent} is no longer running`, 'swarm', env)
    } catch (err) {
      // Answered meanwhile (its requester got that answer and exited): that answer is the news, not a cancellation.
      if (err instanceof ConflictError) throw await alreadyAnswered(team, id, err, env)
    }
    throw new ConflictError('SWARM_REQUEST_CANCELLED', `request ${id} was cancelled: ${pending.agent} is no longer running`, {
      hint: `restart it with \`swarm team resume ${team}\`; it will ask again`,
    })
  }
  const always = answer.kind === 'approve' && (answer.always === true || answer.scope === 'team')
  const by = answer.by ?? `${safeUser()} via swarm perms`
  // The resolved record has no field for a plan's new mode; it rides in updatedInput, which the
  // ExitPlanMode schema strips before the tool sees it (see answerFromResolved).
  const planMode = pending?.kind === 'plan' && answer.kind === 'approve' ? answer.permissionMode : undefined
  const edited = answer.kind === 'approve' ? answer.updatedInput : undefined
  const updatedInput = planMode !== undefined ? { ...edited, permissionMode: planMode } : edited
  let resolved: ResolvedRequest
  // The answer is sealed with the lead's key: the member acts on no record a teammate could write.
  const seal = await leadRecordSeal(config, env)
  try {
    resolved = await resolveRequest(
      team,
      id,
      {
        decision: answer.kind,
        resolvedBy: by,
        ...(seal && { seal }),
        ...(always ? { always } : {}),
        ...(answer.feedback !== undefined ? { feedback: answer.feedback } : {}),
        ...(updatedInput ? { updatedInput } : {}),
      },
      env,
    )
  } catch (err) {
    if (err instanceof ConflictError) throw await alreadyAnswered(team, id, err, env)
    if (err instanceof NotFoundError)
      throw new NotFoundError(`no pending request ${id} in team ${team}`, { hint: `list them with \`swarm perms ${team}\`` })
    throw err
  }

  const updates = always ? rulesFromUpdates(resolved.suggestions) : []
  const result: AnswerResult = { request: resolved, delivered: true, teamRules: [], teamPaths: [] }
  const send = async (to: string, message: StructuredMessage) => {
    try {
      await sendTeamMessage({ team, from: LEAD_NAME, to, text: encodeStructured(message), env })
    } catch (err) {
      result.delivered = false
      result.deliveryError = errorMessage(err)
    }
  }
  const sealing: AlwaysSealing = seal
    ? { seal, ...(await launchRecordCheck(config, env ?? process.env).then((check) => (check ? { check } : {}))) }
    : {}
  if (seal && always && updates.length > 0) {
    // The member's "always" rules are kept by the lead, sealed, before it is told (its own copy would be unsealed).
    await rememberAlways({ team, member: resolved.agent }, resolved.suggestions, env, sealing)
  }
  await send(resolved.agent, responseMessage(resolved, answer, updates))
  if (always && answer.kind === 'approve' && answer.scope === 'team' && resolved.kind === 'permission' && updates.length > 0) {
    const cwd = config.members.find((m) => m.name === resolved.agent)?.cwd ?? process.cwd()
    Object.assign(result, await shareWithTeam(team, updates, cwd, by, send, env, sealing))
  }
  return result
}

function responseMessage(r: ResolvedRequest, answer: GivenAnswer, updates: RuleUpdate[]): StructuredMessage {
  if (r.kind === 'plan') {
    return {
      type: 'plan_approval_response',
      requestId: r.id,
      approved: r.decision === 'approve',
      ...(answer.feedback !== undefined ? { feedback: answer.feedback } : {}),
      timestamp: new Date().toISOString(),
      ...(answer.kind === 'approve' && answer.permissionMode !== undefined ? { permissionMode: answer.permissionMode } : {}),
      // The plan as it was asked about (an edited plan does not change what a Claude Code teammate mailed).
      ...(typeof r.input.plan === 'string' ? { planDigest: claudePlanDigest(r.input.plan) } : {}),
    }
  }
  // Bound to the call, as Claude Code's own lead answers: its key-holding teammates refuse an answer to another call.
  const bound = { approved_request: approvedRequest(r) }
  if (r.decision === 'approve') {
    const suggested = rulesFromUpdates(r.suggestions).length > 0 ? r.suggestions : undefined
    return {
      type: 'permission_response',
      request_id: r.id,
      subtype: 'success',
      ...(r.toolUseId ? { tool_use_id: r.toolUseId } : {}),
      ...bound,
      response: {
        ...(r.updatedInput ? { updated_input: r.updatedInput } : {}),
        ...(updates.length > 0 && suggested ? { permission_updates: suggested } : {}),
      },
    }
  }
  return {
    type: 'permission_response',
    request_id: r.id,
    subtype: 'error',
    ...(r.toolUseId ? { tool_use_id: r.toolUseId } : {}),
    ...bound,
    error: answer.feedback ?? `denied by ${r.resolvedBy}`,
  }
}

/**
 * Team-wide "always": the rules kept in the team's part of the always store (asks/always.ts),
 * which every member's next ask consults — swarm's agents and agent CLIs' hooks alike; path rules
 * recorded in the team's `teamAllowedPaths` (so teammates started later get them too); and a
 * `team_permission_update` to every teammate (what a Claude Code teammate takes).
 */
async function shareWithTeam(
  team: string,
  updates: RuleUpdate[],
  cwd: string,
  by: string,
  send: (to: string, m: StructuredMessage) => Promise<void>,
  env: NodeJS.ProcessEnv | undefined,
  sealing: AlwaysSealing,
): Promise<{ teamRules: string[]; teamPaths: string[] }> {
  const home = env?.HOME || os.homedir()
  const paths = updates.flatMap((u) => {
    const dir = ruleDirectory(u.rule, cwd, home)
    return dir ? [{ path: dir, toolName: u.rule.toolName }] : []
  })
  if (paths.length > 0) {
    await updateTeam(
      team,
      (t) => {
        t.teamAllowedPaths ??= []
        const list = t.teamAllowedPaths
        for (const p of paths) {
          if (!list.some((e) => e.path === p.path && e.toolName === p.toolName)) list.push({ ...p, addedBy: by, addedAt: Date.now() })
        }
      },
      env,
    )
  }
  await rememberAlways(
    { team },
    updates.map((u) => ({ type: 'addRules', rules: [{ ...u.rule }], behavior: u.behavior, destination: 'session' })),
    env,
    sealing,
  )
  const behavior = updates[0].behavior
  await send('*', {
    type: 'team_permission_update',
    permissionUpdate: { type: 'addRules', rules: updates.map((u) => ({ ...u.rule })), behavior, destination: 'session' },
    ...(paths[0] ? { directoryPath: paths[0].path, toolName: paths[0].toolName } : {}),
  })
  return { teamRules: updates.map((u) => formatRuleValue(u.rule)), teamPaths: paths.map((p) => p.path) }
}

async function alreadyAnswered(team: string, id: string, err: ConflictError, env: NodeJS.ProcessEnv | undefined): Promise<SwarmError> {
  const earlier = await readResolved(team, id, env).catch(() => undefined)
  if (!earlier) return err
  const ago = Math.max(0, Math.round((Date.now() - earlier.resolvedAt) / 1000))
  return new ConflictError('SWARM_ALREADY_RESOLVED', `request ${id} was already answered: ${describeAnswer(earlier)}, ${ago} s ago`, {
    hint: `see the pending ones with \`swarm perms ${team}\``,
  })
}

/**
 * How a request was answered, and by whom, in the words `swarm perms` and the leader console
 * both use: `approved always by alice from the web`, `denied ("use make") by team-lead console`.
 */
export function describeAnswer(r: ResolvedRequest): string {
  const how =
    r.decision === 'approve'
      ? `approved${r.always ? ' always' : ''}${r.updatedInput ? ' with edited input' : ''}`
      : r.decision === 'deny'
        ? `denied${r.feedback ? ` (${JSON.stringify(r.feedback)})` : ''}`
        : `cancelled (${r.feedback ?? 'no reason'})`
  return `${how} by ${r.resolvedBy}`
}

/** describeAnswer of the request's resolved record; undefined while it has none (or it cannot be read). */
export async function howAnswered(team: string, id: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await readResolved(team, id, env).catch(() => undefined)
  return r && describeAnswer(r)
}

/** `4 s`, `3 min`, `2 h`. */
export function formatAge(ms: number): string {
  const s = Math.round(ms / 1000)
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  return `${Math.round(s / 3600)} h`
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? ''
  )
}

function safeUser(): string {
  try {
    return os.userInfo().username
  } catch {
    return 'user'
  }
}
