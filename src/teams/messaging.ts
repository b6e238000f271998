import type { InboxMessage } from '../mailbox/types.js'
import { deliver, resolveRecipients } from '../mailbox/send.js'
import { prepareSentLog, recordSent } from '../mailbox/sent-log.js'
import { currentLeadKey, currentLeadSigner, ensureTeamKeys } from '../mailbox/signing.js'
import { NotFoundError } from '../errors.js'
import { LEAD_NAME, sentLogPath } from '../home/paths.js'
import { dualLeadSigner, type LeadSignFn } from '../mailbox/lead-signature.js'
import { claudeLeadOf } from './claude-lead.js'
import { findMember, readTeam } from './team-store.js'

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
}

/**
 * Sends a message inside a team: the sender must be a member; the recipient a member or `*`.
 * A message from team-lead is signed with the team's lead key (created on first use), so
 * teammates can tell a real order from a forged one.
 */
export async function sendTeamMessage(msg: TeamMessage): Promise<InboxMessage[]> {
  const config = await readTeam(msg.team, msg.env)
  const sender = findMember(config, msg.from ?? LEAD_NAME)
  // A Claude Code lead signs with keys only it holds: swarm neither signs for it nor writes key files into its team.
  const sign = sender.name === LEAD_NAME && !claudeLeadOf(config) ? await leadSignerFor(msg.team, msg.env) : undefined
  // Readers that delete what they consume (Claude Code, and a Claude Code lead's team-lead inbox):
  // swarm keeps its own record, so `swarm inbox` shows those messages as consumed, not missing.
  const claudeLed = claudeLeadOf(config) !== undefined
  const consumes = (to: string) => {
    const member = config.members.find((m) => m.name === to)
    const owns = member?.ownsInbox ?? (to === msg.to ? msg.recipientOwnsInbox : undefined)
    return owns === true || (claudeLed && (to === LEAD_NAME || member?.agent === undefined))
  }
  const recipients = resolveRecipients(
    config.members.map((m) => m.name),
    msg.to,
    sender.name,
  )
  const logs = recipients.map((to) => (consumes(to) ? sentLogPath(msg.team, to, msg.env) : undefined))
  for (const log of logs) if (log) await prepareSentLog(log)
  const sent = await deliver({
    team: msg.team,
    members: config.members.map((m) => m.name),
    from: sender.name,
    to: msg.to,
    text: msg.text,
    ...(msg.summary !== undefined ? { summary: msg.summary } : {}),
    ...(sender.color !== undefined ? { color: sender.color } : {}),
    ...(sign ? { sign } : {}),
    env: msg.env,
  })
  for (const [i, log] of logs.entries()) if (log) await recordSent(log, [sent[i]])
  return sent
}

/**
 * The lead's signer for a team (following `swarm team rekey`); a team that never had a key pair
 * gets one, a team that lost its `lead.key` is an error naming `swarm team rekey`.
 */
export async function leadSignerFor(team: string, env?: NodeJS.ProcessEnv): Promise<LeadSignFn> {
  await ensureTeamKeys(team, env)
  return dualLeadSigner(await currentLeadKey(team, env), await currentLeadSigner(team, env))
}

/** The lead's signer, or undefined when `lead.key` is lost (stopping a team must still work; unsigned orders are then ignored and the stop is forced). */
export async function leadSignerIfAny(team: string, env?: NodeJS.ProcessEnv): Promise<LeadSignFn | undefined> {
  try {
    return await leadSignerFor(team, env)
  } catch (err) {
    if (err instanceof NotFoundError) return undefined
    throw err
  }
}
