/**
 * Permission hooks fail closed: when `swarm hook permission-request|pre-tool` cannot do its job
 * (bad payload, team or adapter lookup, store errors, a lock timeout, anything unexpected), the CLI
 * gets a deny in its own form — never a hook error, which some CLIs (Gemini CLI) take as "go on".
 */
import { errorMessage } from '../errors.js'
import { resolveAdapter } from './registry.js'
import type { AgentAdapter, HookReply, SwarmHookEvent } from './types.js'

/** The hook events whose answer lets a tool call run: their failures deny it. */
export const GATING_EVENTS: readonly SwarmHookEvent[] = ['pre-tool', 'permission-request']

export function isGatingEvent(event: string): boolean {
  return (GATING_EVENTS as readonly string[]).includes(event)
}

export interface FailedHook {
  event: SwarmHookEvent
  /** The adapter kind, when known. */
  agent?: string
  env?: NodeJS.ProcessEnv
  /** Where project adapter files are looked up (the lead's cwd), when known. */
  cwd?: string
}

/** The deny for `err`: the adapter's own deny form (looked up again if not given), else exit 2 — "block" to Claude-style hooks. */
export async function failClosed(hook: FailedHook, err: unknown, adapter?: AgentAdapter): Promise<HookReply> {
  const message = `swarm could not ask the team lead, so the call is denied: ${errorMessage(err).replace(/\s+/g, ' ').slice(0, 300)}`
  const stderr = `swarm: hook ${hook.event} failed: ${errorMessage(err)}\n`
  const found = adapter ?? (await resolveAdapter(hook.agent, { cwd: hook.cwd ?? process.cwd(), env: hook.env }).catch(() => undefined))
  if (found) {
    try {
      return { ...found.answerPermission(hook.event, { behavior: 'deny', message }, {}), stderr }
    } catch {
      // A user-defined adapter whose deny form cannot be rendered: the generic block below.
    }
  }
  return { stderr: `${message}\n`, exitCode: 2 }
}
