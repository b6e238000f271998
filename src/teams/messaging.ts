import type { InboxMessage } from '../mailbox/types.js'
import { addressMessage, deliverAddressed } from '../mailbox/send.js'
import { prepareSentLog, recordSent } from '../mailbox/sent-log.js'
import { LEAD_NAME, sentLogPath } from '../home/paths.js'
import { seal, teamLeadSigner, teamLeadSignerIfAny, type Sealer } from '../trust/sign.js'
import type { TeamFile } from './types.js'
import { claudeLeadOf } from './claude-lead.js'
import { findMember, readTeamShared } from './team-store.js'

export interface TeamMessage {
  team: string
  /** The sending member (default team-lead). */
  from?: string
  /** A member's name or `*`. */
  to: string
  text: string
  summary?: string
  env?: NodeJS.ProcessEnv
  /** Whether the recipient consumes its own inbox when the roster does not say yet (a teammate's first prompt, before it is recorded). */
  recipientOwnsInbox?: boolean
  /** The team's config when the caller has just read it (`swarm send` resolves the recipients from it). */
  config?: TeamFile
}

/**
 * Sends a message inside a team: the sender must be a member; the recipient a member or `*`.
 * A message from team-lead is signed with the team's lead key (created on first use), so
 * teammates can tell a real order from a forged one.
 */
export async function sendTeamMessage(msg: TeamMessage): Promise<InboxMessage[]> {
  const config = msg.config ?? (await readTeamShared(msg.team, msg.env)) // only looked at
  const sender = findMember(config, msg.from ?? LEAD_NAME)
  // A Claude Code lead signs with keys only it holds: swarm neither signs for it nor writes key files into its team.
  const sealer: Sealer = sender.name !== LEAD_NAME ? 'teammate' : ((await leadSealerOf(config, msg.env)) ?? (await teamLeadSigner(msg.team, msg.env)))
  // Readers that delete what they consume (Claude Code, and a Claude Code lead's team-lead inbox):
  // swarm keeps its own record, so `swarm inbox` shows those messages as consumed, not missing.
  const claudeLed = claudeLeadOf(config) !== undefined
  const consumes = (to: string) => {
    const member = config.members.find((m) => m.name === to)
    const owns = member?.ownsInbox ?? (to === msg.to ? msg.recipientOwnsInbox : undefined)
    return owns === true || (claudeLed && (to === LEAD_NAME || member?.agent === undefined))
  }
  const addressed = addressMessage({
    members: config.members.map((m) => m.name),
    from: sender.name,
    to: msg.to,
    text: msg.text,
    ...(msg.summary !== undefined ? { summary: msg.summary } : {}),
    ...(sender.color !== undefined ? { color: sender.color } : {}),
  })
  const logs = addressed.map(({ to }) => (consumes(to) ? sentLogPath(msg.team, to, msg.env) : undefined))
  for (const log of logs) if (log) await prepareSentLog(log)
  const sent = await deliverAddressed(msg.team, seal(addressed, sealer), msg.env)
  for (const [i, log] of logs.entries()) if (log) await recordSent(log, [sent[i]])
  return sent
}

/**
 * How team-lead's entries are sealed in `config`'s team: `claude-lead` when Claude Code leads it
 * (its keys are its own; swarm makes none there), else the team's signer — undefined when its
 * `lead.key` is lost (an order then cannot be trusted: stopping forces instead of asking).
 */
export async function leadSealerOf(config: TeamFile, env?: NodeJS.ProcessEnv): Promise<Sealer | undefined> {
  return claudeLeadOf(config) ? 'claude-lead' : teamLeadSignerIfAny(config.name, env)
}
