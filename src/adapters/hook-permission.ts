/**
 * A CLI teammate's permission request, bubbled to team-lead through the same broker as swarm's
 * own teammates: the durable pending record, a `permission_request` in the lead's inbox, then a
 * wait (watch + safety poll) for `resolved/<id>.json`, which `swarm perms` or the console writes.
 */
import fs from 'node:fs'
import { encodeStructured } from '../mailbox/messages.js'
import { newRequestId } from '../permissions/requests/bubble.js'
import { readResolved, writePending, type ResolvedRequest } from '../permissions/requests/store.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { LEAD_NAME, agentId, resolvedPermissionsDir } from '../home/paths.js'
import { ensureDir } from '../util/fs.js'
import { shortRequestId } from '../home/request-id.js'
import { clipped } from '../terminal/clip.js'
import { alwaysAllowed, memberCwd, rememberAlways, shellCommandOf, shellSuggestions } from './hook-always.js'
import type { PermissionAnswer } from './types.js'

/** How often the wait re-reads the resolved file in case the directory watch missed it. */
const SAFETY_POLL_MS = 250

export interface HookPermissionRequest {
  team: string
  name: string
  toolName: string
  /** The CLI's shell tools (its adapter's `shellTools`): a call of one may be covered by an earlier "always". */
  shellTools: readonly string[]
  input: Record<string, unknown>
  description: string
  env?: NodeJS.ProcessEnv
  signal?: AbortSignal
  /** Called once the request is durable in pending/ (with its id), before team-lead is told. */
  onPending?: (id: string) => Promise<void>
}

/**
 * The lead's answer; a shell command an earlier "always" covers is allowed without asking (no
 * request, id ''), and one approved with "always" leaves its rule for the next (hook-always.ts).
 */
export async function askLead(req: HookPermissionRequest): Promise<PermissionAnswer & { id: string }> {
  const command = shellCommandOf(req.shellTools, req.toolName, req.input)
  const cwd = command === undefined ? process.cwd() : await memberCwd(req.team, req.name, req.env)
  const kept = command === undefined ? undefined : await alwaysAllowed(req.team, req.name, command, cwd, req.env)
  if (kept) return { id: '', behavior: 'allow', message: `allowed by ${kept} (approved always earlier)` }
  const suggestions = command === undefined ? [] : shellSuggestions(command, cwd)
  const id = newRequestId('permission')
  const toolUseId = `hook-${id}`
  await writePending(
    req.team,
    {
      id,
      kind: 'permission',
      agent: req.name,
      agentId: agentId(req.name, req.team),
      toolName: req.toolName,
      toolUseId,
      input: req.input,
      description: req.description,
      suggestions,
      createdAt: Date.now(),
      pid: process.pid,
    },
    req.env,
  )
  await req.onPending?.(id)
  const message = encodeStructured({
    type: 'permission_request',
    request_id: id,
    agent_id: req.name,
    tool_name: req.toolName,
    tool_use_id: toolUseId,
    description: req.description,
    input: req.input,
    permission_suggestions: suggestions,
  })
  await sendTeamMessage({
    team: req.team,
    from: req.name,
    to: LEAD_NAME,
    text: message,
    summary: clipped(`permission: ${req.toolName} ${req.description}`, 120, `swarm perms show ${req.team} ${shortRequestId(id)}`),
    env: req.env,
  })
  const resolved = await waitResolved(req.team, id, req.env, req.signal)
  if (resolved.decision === 'approve' && resolved.always) await rememberAlways(req.team, req.name, resolved.suggestions, req.env)
  if (resolved.decision === 'approve') return { id, behavior: 'allow', ...(resolved.feedback && { message: resolved.feedback }) }
  const why =
    resolved.decision === 'cancelled' ? `cancelled: ${resolved.feedback ?? 'no answer'}` : (resolved.feedback ?? `denied by ${resolved.resolvedBy}`)
  return { id, behavior: 'deny', message: why }
}

function waitResolved(team: string, id: string, env: NodeJS.ProcessEnv | undefined, signal: AbortSignal | undefined): Promise<ResolvedRequest> {
  const dir = resolvedPermissionsDir(team, env)
  return new Promise<ResolvedRequest>((resolve, reject) => {
    let watcher: fs.FSWatcher | undefined
    let done = false
    const cleanup = () => {
      done = true
      clearInterval(timer)
      watcher?.close()
      signal?.removeEventListener('abort', onAbort)
    }
    const check = () => {
      // Orphaned (the CLI that ran this hook is gone; Codex runs hooks in a session of their own, so
      // the pane's reaping misses them): nobody is left to answer for.
      if (process.ppid === 1) {
        cleanup()
        reject(new Error('the agent CLI that asked is gone'))
        return
      }
      readResolved(team, id, env).then(
        (r) => {
          if (r && !done) {
            cleanup()
            resolve(r)
          }
        },
        (err: unknown) => {
          cleanup()
          reject(err instanceof Error ? err : new Error(String(err)))
        },
      )
    }
    const onAbort = () => {
      cleanup()
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'))
    }
    const timer = setInterval(check, SAFETY_POLL_MS)
    signal?.addEventListener('abort', onAbort, { once: true })
    ensureDir(dir).then(
      () => {
        if (done) return
        watcher = fs.watch(dir, check)
        // A watch that breaks (the directory replaced, removed) must not crash the hook: the poll goes on.
        watcher.on('error', () => watcher?.close())
        check()
      },
      () => check(),
    )
  })
}
