import { CorruptFileError, NotFoundError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import { encodeStructured, type MessageOf } from '../mailbox/messages.js'
import { addressMessage, deliverAddressed } from '../mailbox/send.js'
import { leadKeyPath, loadLeadPrivateKey, replaceTeamKeys } from '../trust/keys.js'
import { claudeVerifyKeyFor, leadSigner, seal } from '../trust/sign.js'
import { moveAside } from '../util/fs.js'
import { createExecutor } from '../backends/registry.js'
import { readMemberState } from '../store/member-state.js'
import { backendOf } from '../backends/directory.js'
import { isAlive } from '../process/liveness.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import { readTeam } from '../teams/team-store.js'
import { resumeTeam } from './resume.js'

/**
 * `swarm team rekey <team>`: a new lead key pair. While the old private key is there, every
 * running teammate is handed the new public key (and its own new Claude-format key) in a
 * `lead_key_update` signed by the OLD key, and switches in every scheme — except a member that
 * reads its own inbox (Claude Code), which knows no such message and is restarted. When the old
 * key is gone, no message could be trusted, so every running pane teammate is restarted
 * (continuing from its transcript) and launches with the new key.
 */

export interface RekeyReport {
  team: string
  /** The new public key (base64 of the raw 32 bytes), as in `lead.pub`. */
  publicKey: string
  /** Whether the old private key signed the hand-over. */
  oldKey: 'used' | 'missing' | 'corrupt'
  /** Teammates handed the new key by a signed message. */
  handedTo: string[]
  /** Teammates restarted with the new key. */
  restarted: string[]
  /** Running teammates this command could not give the new key, and why. */
  notReached: Array<{ name: string; reason: string }>
}

export async function rekeyTeam(team: string, env: NodeJS.ProcessEnv = process.env): Promise<RekeyReport> {
  const config = await readTeam(team, env)
  const [old, running] = await Promise.all([oldKey(team, env), runningTeammates(config, env)])
  const { privateKey, publicKey } = await replaceTeamKeys(team, env)
  const report: RekeyReport = { team, publicKey, oldKey: old.state, handedTo: [], restarted: [], notReached: [] }
  if (!old.key) {
    await restart(team, running, report, env)
    return report
  }
  // A member that reads its own inbox (Claude Code) checks orders against the key it was started
  // with and knows no lead_key_update: only a restart gives it the new key, and revokes the old.
  const selfVerifying = running.filter((m) => m.ownsInbox === true)
  const members = config.members.map((m) => m.name)
  const sign = leadSigner(old.key)
  for (const m of running.filter((r) => !selfVerifying.includes(r))) {
    const now = Date.now()
    const update: MessageOf<'lead_key_update'> = {
      type: 'lead_key_update',
      from: LEAD_NAME,
      publicKey,
      leadVerifyKey: claudeVerifyKeyFor(privateKey, m.name, now),
      timestamp: new Date(now).toISOString(),
    }
    const addressed = addressMessage({ members, from: LEAD_NAME, to: m.name, text: encodeStructured(update), summary: 'new lead key' })
    await deliverAddressed(team, seal(addressed, sign), env)
    report.handedTo.push(m.name)
  }
  await restart(team, selfVerifying, report, env)
  return report
}

/** Restarts pane teammates (continuing from their transcripts), so they launch with the new key; in-process ones need their leader. */
async function restart(team: string, members: TeamMember[], report: RekeyReport, env: NodeJS.ProcessEnv): Promise<void> {
  const panes = members.filter((m) => backendOf(m) === 'tmux' || backendOf(m) === 'iterm2')
  for (const m of members) {
    if (!panes.includes(m))
      report.notReached.push({ name: m.name, reason: 'it runs inside the leader: restart the leader (/quit, then swarm team resume)' })
  }
  for (const m of panes) await createExecutor(backendOf(m) as 'tmux' | 'iterm2', { env }).kill(m.agentId)
  if (!panes.length) return
  const resumed = await resumeTeam(team, { env })
  report.restarted.push(...panes.map((m) => m.name).filter((n) => resumed.respawned.includes(n)))
  for (const m of panes) if (!resumed.respawned.includes(m.name)) report.notReached.push({ name: m.name, reason: 'it was not respawned' })
}

/**
 * The teammates that run, holding the old public key: a live state-file pid (swarm's agent; an
 * in-process one's is its leader's), or a live pane on its executor — an agent-CLI teammate's
 * wrapper records no pid, and Claude Code writes no state file at all.
 */
async function runningTeammates(config: TeamFile, env: NodeJS.ProcessEnv): Promise<TeamMember[]> {
  const teammates = config.members.filter((m) => m.name !== LEAD_NAME)
  const states = await Promise.all(teammates.map((m) => readMemberState(config.name, m.name, env).catch(() => undefined)))
  const byPid = new Set(
    teammates.filter((_, i) => {
      const s = states[i]
      return s?.pid !== undefined && s.status !== 'exited' && s.status !== 'dead' && isAlive(s.pid)
    }),
  )
  const inPanes = teammates.filter((m) => !byPid.has(m) && (backendOf(m) === 'tmux' || backendOf(m) === 'iterm2'))
  const alive = new Set<string>()
  for (const type of ['tmux', 'iterm2'] as const) {
    const ids = inPanes.filter((m) => backendOf(m) === type).map((m) => m.agentId)
    if (!ids.length) continue
    const states = await createExecutor(type, { env })
      .status(ids)
      .catch(() => new Map())
    for (const [id, st] of states) if (st.state === 'alive') alive.add(id)
  }
  return teammates.filter((m) => byPid.has(m) || alive.has(m.agentId))
}

async function oldKey(
  team: string,
  env: NodeJS.ProcessEnv,
): Promise<{ key?: Awaited<ReturnType<typeof loadLeadPrivateKey>>; state: RekeyReport['oldKey'] }> {
  try {
    return { key: await loadLeadPrivateKey(team, env), state: 'used' }
  } catch (err) {
    if (err instanceof NotFoundError) return { state: 'missing' }
    if (err instanceof CorruptFileError) {
      await moveAside(leadKeyPath(team, env)) // kept for inspection, never overwritten
      return { state: 'corrupt' }
    }
    throw err
  }
}
