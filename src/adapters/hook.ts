/**
 * `swarm hook <event>`: what every CLI teammate's hooks call. It records the state (working on
 * prompt-submit / pre-tool, idle on stop, waiting while a permission is asked), sends ONE
 * idle_notification to the lead per transition to idle, and answers permission requests with the
 * leader's decision in the CLI's own form. Its own failures never block the CLI (exit 0, no reply),
 * except on pre-tool / permission-request, where they deny the call (hook-fail.ts).
 */
import { updateMemberState, type MemberState, type MemberStatePatch, type MemberStateWrite, type MemberStatus } from '../store/member-state.js'
import { sendIdleNotification } from '../teams/idle-notification.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam } from '../teams/team-store.js'
import { failClosed, isGatingEvent } from './hook-fail.js'
import { askLead } from './hook-permission.js'
import { fileToolDecision } from './hook-rules.js'
import { appendHookLog, promptDigest } from './hook-log.js'
import { AdapterPinError, pinnedAdapter } from './adapter-pin.js'
import type { AgentAdapter, HookFacts, HookReply, SwarmHookEvent } from './types.js'
import type { Env } from '../home/env.js'

export interface HookInvocation {
  event: SwarmHookEvent
  team: string
  name: string
  /** The adapter kind (`--agent`), as the teammate was launched with. */
  agent: string
  /** The CLI's hook payload (parsed stdin), or undefined when it sent none. */
  payload: unknown
  env: Env
  signal?: AbortSignal
  /** permission-request: the id of the request on file, once it is (to withdraw it if answered elsewhere). */
  onAsked?: (requestId: string) => void
}

/** A hook's stdin is the CLI's JSON payload; none (empty) is no payload, and text that is not JSON a message. */
export function parseHookPayload(text: string): unknown {
  if (!text.trim()) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return { message: text }
  }
}

export async function runHook(inv: HookInvocation): Promise<HookReply> {
  if (!isGatingEvent(inv.event)) return dispatch(inv, {})
  // A tool call waits on this answer: any failure is a deny in the CLI's form, never a hook error.
  const found: Found = {}
  try {
    return await dispatch(inv, found)
  } catch (err) {
    return failClosed({ event: inv.event, agent: inv.agent, env: inv.env, ...(found.cwd && { cwd: found.cwd }) }, err, found.adapter)
  }
}

/** What dispatch learnt before it failed: the lead's cwd and the adapter. */
interface Found {
  cwd?: string
  adapter?: AgentAdapter
  member?: { cwd?: string; mode?: string }
}

async function dispatch(inv: HookInvocation, found: Found): Promise<HookReply> {
  const team = await readTeam(inv.team, inv.env)
  const leadCwd = team.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  found.cwd = leadCwd
  const member = team.members.find((m) => m.name === inv.name)
  found.member = member
  // Built-ins by kind; a user-defined adapter only as pinned at spawn: a changed file denies.
  const adapter = await pinnedAdapter(inv.agent, member).catch((err: unknown) => (err instanceof AdapterPinError ? err : Promise.reject(err)))
  if (adapter instanceof AdapterPinError) return unpinned(inv.event, adapter)
  if (!adapter) {
    if (isGatingEvent(inv.event)) throw new Error(`no adapter for --agent ${JSON.stringify(inv.agent)} to answer in`)
    return { exitCode: 0 }
  }
  found.adapter = adapter
  const facts = adapter.readHook(inv.event, inv.payload)
  const at = Date.now()
  switch (inv.event) {
    case 'prompt-submit':
      // Working first: the courier takes the log entry as "submitted", then waits for idle again.
      await setStatus(inv, 'working', 'thinking')
      await appendHookLog(
        inv.team,
        inv.name,
        { event: inv.event, at: Date.now(), ...(facts.prompt !== undefined && { digest: promptDigest(facts.prompt), length: facts.prompt.length }) },
        inv.env,
      )
      return { exitCode: 0 }
    case 'pre-tool':
    case 'post-tool':
      await appendHookLog(inv.team, inv.name, { event: inv.event, at, ...(facts.toolName !== undefined && { tool: facts.toolName }) }, inv.env)
      // A CLI may run its hooks of one event side by side (Gemini CLI's BeforeTool): a permission
      // hook of the same call asking the lead keeps the state `waiting` until it is answered —
      // judged in the same locked update, so a permission hook's `waiting` is never overwritten.
      await updateMemberState(
        inv.team,
        inv.name,
        (old) => (inv.event === 'pre-tool' && askingFor(old, facts.toolName) ? {} : statusPatch('working', facts.toolName)),
        inv.env,
        { create: true },
      )
      return { exitCode: 0 }
    case 'permission-request': {
      // A file write swarm's rules decide (a deny, or acceptEdits' allow) is answered without asking.
      const ruled = fileToolDecision(adapter, facts, { cwd: found.member?.cwd ?? leadCwd, mode: found.member?.mode, env: inv.env })
      if (ruled && ruled.behavior !== 'ask') {
        await appendHookLog(inv.team, inv.name, { event: inv.event, at, ...(facts.toolName !== undefined && { tool: facts.toolName }) }, inv.env)
        return adapter.answerPermission(inv.event, { behavior: ruled.behavior, message: ruled.reason }, facts)
      }
      return permission(inv, adapter, facts)
    }
    case 'stop':
      await goIdle(inv, facts)
      return { exitCode: 0 }
    case 'session-start':
      // Still `starting`: a CLI with its first prompt in argv turns to it next (the courier knows which).
      await appendHookLog(inv.team, inv.name, { event: inv.event, at }, inv.env)
      return { exitCode: 0 }
    case 'session-end':
      await appendHookLog(inv.team, inv.name, { event: inv.event, at }, inv.env)
      await setStatus(inv, 'exited', 'session ended')
      return { exitCode: 0 }
    case 'notification':
      await appendHookLog(inv.team, inv.name, { event: inv.event, at }, inv.env)
      return { exitCode: 0 }
  }
}

/**
 * A hook of a teammate whose adapter file changed or is gone: its reply templates cannot be
 * trusted, so a permission request is denied the generic way (exit 2, one line); others do nothing.
 */
function unpinned(event: SwarmHookEvent, err: AdapterPinError): HookReply {
  if (event !== 'permission-request') return { exitCode: 0 }
  return { stderr: `swarm: denied: ${err.message} — ${err.hint ?? 'respawn the teammate'}\n`, exitCode: 2 }
}

async function permission(inv: HookInvocation, adapter: AgentAdapter, facts: HookFacts): Promise<HookReply> {
  const toolName = facts.toolName ?? 'tool'
  const input = facts.toolInput ?? {}
  const description = describeCall(toolName, input)
  await appendHookLog(inv.team, inv.name, { event: inv.event, at: Date.now(), tool: toolName }, inv.env)
  let waitingDetail = `${toolName} ${description}`
  const answer = await askLead({
    team: inv.team,
    name: inv.name,
    toolName,
    shellTools: adapter.shellTools ?? [],
    input,
    description,
    env: inv.env,
    setStatus: async (status, detail) => {
      if (status === 'waiting' && detail !== undefined) waitingDetail = detail
      await setStatus(inv, status, status === 'working' ? toolName : detail)
    },
    // Said again once the request is on file: a side-by-side hook may have written `working` meanwhile.
    onPending: async (id) => {
      await setStatus(inv, 'waiting', waitingDetail)
      inv.onAsked?.(id)
    },
    ...(inv.signal && { signal: inv.signal }),
  }).finally(async () => {
    // Cut off (the relay connection closed): the ask withdrew its request; the CLI goes on working.
    if (inv.signal?.aborted) await setStatus(inv, 'working', toolName)
  })
  return adapter.answerPermission(inv.event, answer, facts)
}

/** Whether the state says a permission for `toolName` is being asked right now. */
function askingFor(state: MemberState | undefined, toolName: string | undefined): boolean {
  return state?.status === 'waiting' && toolName !== undefined && (state.detail ?? '').startsWith(`${toolName} `)
}

/** One notification per transition: a stop while already idle sends nothing (judged in the same locked update). */
async function goIdle(inv: HookInvocation, facts: HookFacts): Promise<void> {
  const change = await setStatus(inv, 'idle', 'waiting for messages')
  // Logged once the state says idle: the log's time is when `swarm status` could see it.
  await appendHookLog(inv.team, inv.name, { event: 'stop', at: Date.now() }, inv.env)
  if (change?.before?.status === 'idle') return
  await sendIdleNotification(
    inv.team,
    inv.name,
    { idleReason: 'available', ...(facts.lastAssistantText && { summary: facts.lastAssistantText }) },
    inv.env,
  )
}

/**
 * Records a CLI teammate's status (its hooks, its wrapper) through the one state writer; a
 * `detail` not given keeps the one on file. A hook may make the member's directory (it speaks for
 * a live member); the wrapper's last words pass `{}` so that a removed member stays removed.
 */
export async function setStatus(
  inv: Pick<HookInvocation, 'team' | 'name' | 'env'>,
  status: MemberStatus,
  detail?: string,
  extra: MemberStatePatch = {},
  write: MemberStateWrite = { create: true },
): ReturnType<typeof updateMemberState> {
  return updateMemberState(inv.team, inv.name, { ...extra, ...statusPatch(status, detail) }, inv.env, write)
}

function statusPatch(status: MemberStatus, detail?: string): MemberStatePatch {
  return { status, ...(detail !== undefined && { detail }), lastActivity: Date.now() }
}

function describeCall(toolName: string, input: Record<string, unknown>): string {
  for (const k of ['command', 'file_path', 'path', 'filePath', 'url', 'pattern']) {
    const v = input[k]
    if (typeof v === 'string') return v.length > 200 ? `${v.slice(0, 200)}…` : v
  }
  const json = JSON.stringify(input)
  return json === '{}' ? toolName : json.slice(0, 200)
}
