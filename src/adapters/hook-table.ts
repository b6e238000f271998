/**
 * The Claude-Code-style hook table Codex, Gemini CLI and Qwen Code read from their config —
 * `{ <its event>: [{ hooks: [<command entry>] }] }` — each entry calling `swarm hook <event>`.
 * Only the entry's fields differ per CLI (a name, the unit of its timeout).
 */
import type { AdapterContext, SwarmHookEvent } from './types.js'

type HookEntry = (event: SwarmHookEvent) => Record<string, unknown>

/** One matcher-less group per event of `events` (the CLI's event name → swarm's). */
export function hookTable(events: Readonly<Record<string, SwarmHookEvent>>, entry: HookEntry): Record<string, unknown[]> {
  return Object.fromEntries(Object.entries(events).map(([cli, ours]) => [cli, [{ hooks: [entry(ours)] }]]))
}

/**
 * A command entry whose timeout is a day, so a lead's answer to a permission request is never cut
 * short: `timeoutUnit` is what the CLI counts it in; `named` adds `name: swarm-<event>` (Gemini CLI, Qwen Code).
 */
export function commandHook(ctx: AdapterContext, timeoutUnit: 'ms' | 's', named: boolean): HookEntry {
  const timeout = timeoutUnit === 'ms' ? 86_400_000 : 86_400
  return (event) => ({ type: 'command', ...(named ? { name: `swarm-${event}` } : {}), command: ctx.hookCommand(event), timeout })
}
