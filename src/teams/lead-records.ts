import { currentLeadKey, ensureTeamKeys, resolveLeadVerifyKey } from '../trust/keys.js'
import { type RecordKind, recordSealer, verifyRecord } from '../trust/record-seal.js'
import { claudeLeadOf } from './claude-lead.js'
import type { TeamFile } from './types.js'

/**
 * The lead's seal and its check for the team records it writes as files (resolved requests,
 * "always" rules: trust/record-seal), bound to one team. A team led by Claude Code seals nothing
 * (swarm holds none of its keys): there the records count as written, Claude Code's model.
 */

export type TeamRecordSeal = (kind: RecordKind, body: Record<string, unknown>) => string
export type TeamRecordCheck = (kind: RecordKind, record: Record<string, unknown>) => boolean | Promise<boolean>

/** team-lead's seal for `config`'s team (its key made on first use); undefined in a team led by Claude Code. */
export async function leadRecordSeal(config: TeamFile, env?: NodeJS.ProcessEnv): Promise<TeamRecordSeal | undefined> {
  if (claudeLeadOf(config)) return undefined
  await ensureTeamKeys(config.name, env)
  const seal = recordSealer(await currentLeadKey(config.name, env))
  return (kind, body) => seal(kind, config.name, body)
}

/**
 * The check of a process that verifies with the key it was launched with (`SWARM_LEAD_VERIFY_KEY`,
 * else lead.pub as it was at start): an agent CLI's hook and relay. undefined in a team led by
 * Claude Code. A team with no key yet takes the key made first (when the lead first seals).
 */
export async function launchRecordCheck(config: TeamFile, env: NodeJS.ProcessEnv): Promise<TeamRecordCheck | undefined> {
  if (claudeLeadOf(config)) return undefined
  let key = await resolveLeadVerifyKey(config.name, env).catch(() => undefined)
  return async (kind, record) => {
    // A team without a key yet gets its first pair when the lead first signs: read it then, once.
    key ??= await resolveLeadVerifyKey(config.name, env).catch(() => undefined)
    return verifyRecord(key, kind, config.name, record)
  }
}
