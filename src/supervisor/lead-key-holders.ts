import { LEAD_NAME } from '../home/paths.js'
import { flagValue, processesByArgv } from '../process/argv.js'
import { delay } from '../process/delay.js'
import { isAlive } from '../process/liveness.js'
import { sendSignal } from '../process/signals.js'
import { killTree } from '../process/tree.js'
import { claudeLeadAlive, claudeLeadOf } from '../teams/claude-lead.js'
import type { TeamFile } from '../teams/types.js'

/**
 * Teammates a Claude Code lead launched hold its `--lead-verify-key` and obey only entries signed
 * with its private key, which swarm never had: once that lead is gone, no shutdown swarm writes
 * can reach them. They are ended as Claude Code itself ends on a stop signal (SIGTERM: 2.1.332
 * exits within ~50 ms, idle or not; SIGINT only clears its prompt), then reaped — by `team delete`
 * and `swarm kill` alike (endGoneLeadKeyHolders).
 */

/**
 * How long a signalled teammate gets before its tree is killed: Claude Code exits in ~50 ms quiet,
 * but took over 2 s at load 14 on 2 cores (a clean-clone test:interop run), and only one that
 * ignores the signal waits this long.
 */
export const KEY_HOLDER_GRACE_MS = 5_000

/** A live teammate process launched with Claude Code's teammate argv and a lead key. */
export interface KeyHolder {
  name: string
  pid: number
}

/** The team's teammates whose processes (found by `--agent-id <name>@<team>`) hold a `--lead-verify-key`. */
export function leadKeyHolders(config: TeamFile): KeyHolder[] {
  const byId = new Map(config.members.filter((m) => m.name !== LEAD_NAME).map((m) => [m.agentId, m.name]))
  return processesByArgv((argv) => {
    const id = flagValue(argv, '--agent-id')
    return id !== undefined && byId.has(id) && flagValue(argv, '--lead-verify-key') !== undefined
  }).map((p) => ({ name: byId.get(flagValue(p.argv, '--agent-id')!)!, pid: p.pid }))
}

/** How each key holder ended: on the signal, or killed after the grace time. */
export interface KeyHolderReport {
  signalled: string[]
  killed: string[]
}

/** SIGTERM to every key holder, a wait of up to `graceMs` for all of them, then the tree of each one left. */
export async function endKeyHolders(holders: readonly KeyHolder[], graceMs = KEY_HOLDER_GRACE_MS): Promise<KeyHolderReport> {
  for (const h of holders) sendSignal(h.pid, 'SIGTERM')
  for (const deadline = Date.now() + graceMs; holders.some((h) => isAlive(h.pid)) && Date.now() < deadline; ) await delay(25)
  const report: KeyHolderReport = { signalled: [], killed: [] }
  for (const h of holders) {
    const survived = isAlive(h.pid)
    if (survived) await killTree(h.pid)
    const list = survived ? report.killed : report.signalled
    if (!list.includes(h.name)) list.push(h.name)
  }
  return report
}

/**
 * On a team whose Claude Code lead is gone: ends the key holders among `only` (every teammate
 * when absent) with endKeyHolders. Nothing (empty lists) for a team swarm leads, or while that
 * lead lives — its teammates then still obey it.
 */
export async function endGoneLeadKeyHolders(config: TeamFile, opts: { only?: readonly string[]; graceMs?: number } = {}): Promise<KeyHolderReport> {
  const lead = claudeLeadOf(config)
  if (!lead || claudeLeadAlive(lead)) return { signalled: [], killed: [] }
  const holders = leadKeyHolders(config).filter((h) => !opts.only || opts.only.includes(h.name))
  return endKeyHolders(holders, opts.graceMs)
}
