import type { InboxMessage } from '../mailbox/types.js'
import { deliver } from '../mailbox/send.js'
import { currentLeadSigner, ensureTeamKeys } from '../mailbox/signing.js'
import { NotFoundError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
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
}

/**
 * Sends a message inside a team: the sender must be a member; the recipient a member or `*`.
 * A message from team-lead is signed with the team's lead key (created on first use), so
 * teammates can tell a real order from a forged one.
 */
export async function sendTeamMessage(msg: TeamMessage): Promise<InboxMessage[]> {
  const config = await readTeam(msg.team, msg.env)
  const sender = findMember(config, msg.from ?? LEAD_NAME)
  const sign = sender.name === LEAD_NAME ? await leadSignerFor(msg.team, msg.env) : undefined
  return deliver({
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
}

/**
 * The lead's signer for a team (following `swarm team rekey`); a team that never had a key pair
 * gets one, a team that lost its `lead.key` is an error naming `swarm team rekey`.
 */
export async function leadSignerFor(team: string, env?: NodeJS.ProcessEnv): Promise<(m: InboxMessage, to: string) => string | undefined> {
  await ensureTeamKeys(team, env)
  return currentLeadSigner(team, env)
}

/** The lead's signer, or undefined when `lead.key` is lost (stopping a team must still work; unsigned orders are then ignored and the stop is forced). */
export async function leadSignerIfAny(
  team: string,
  env?: NodeJS.ProcessEnv,
): Promise<((m: InboxMessage, to: string) => string | undefined) | undefined> {
  try {
    return await leadSignerFor(team, env)
  } catch (err) {
    if (err instanceof NotFoundError) return undefined
    throw err
  }
}
