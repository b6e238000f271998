import path from 'node:path'
import { ConflictError, NotFoundError } from '../errors.js'
import { LEAD_NAME, inboxPath, inboxesDir, pendingPermissionsDir, resolvedPermissionsDir, teamDir } from '../home/paths.js'
import type { Env } from '../home/env.js'
import { listPending, readResolved, recordResolved, resolveRequest, type ResolvedRequest } from '../asks/store.js'
import { markRead, readInbox } from '../mailbox/inbox.js'
import { readMemberState } from '../store/member-state.js'
import { readTeam } from '../teams/team-store.js'
import type { TeamMember } from '../teams/types.js'
import { deliverRelayed } from './deliver.js'
import { ensureDir } from '../util/fs.js'
import { Journal } from './journal.js'
import { takeRelayLease } from './lease.js'
import { RelayPeer } from './peer.js'
import { scanOnChange } from './scanner.js'
import { swarmVersion } from './version.js'

/*
 * The host's end of a team's relay (`swarm remote relay --team T --link ID`, run over the SSH
 * channel): one per team here, under its lease (remote/lease.ts — a second link's is refused, the
 * same link's, connected again, replaces it). It owns the inboxes of the members resident here, in
 * this machine's own state root: it writes what the link sends (entries for them, answers to
 * their requests) and sends what they wrote for anyone who lives elsewhere — the lead and the
 * local members — with their permission requests and their state. The local mailbox stays the
 * truth: what a resident member writes for another member resident here stays here.
 */

export interface RelayIo {
  input: NodeJS.ReadableStream
  write(text: string): void
  signal: AbortSignal
}

/** Where the relay keeps its journal: beside the mirror team's files, gone with them. */
export function relayJournalDir(team: string, env: Env): string {
  return path.join(teamDir(team, env), 'remote-relay')
}

/**
 * Runs until the channel ends, `signal` aborts, or the other side fails the exchange; resolves with
 * why it ended. `link` is the id of the link it relays for; ConflictError when another link's relay runs.
 */
export async function runRelay(team: string, io: RelayIo, env: Env, link: string): Promise<string> {
  const dir = relayJournalDir(team, env)
  await ensureDir(dir)
  const lease = await takeRelayLease(path.join(dir, 'relay.pid'), team, link)
  try {
    return await relayUnderLease(team, io, env, await Journal.open(dir))
  } finally {
    lease.release()
  }
}

async function relayUnderLease(team: string, io: RelayIo, env: Env, journal: Journal): Promise<string> {
  const fromLink = new Set<string>()
  let failed: ((why: string) => void) | undefined
  const ended = new Promise<string>((resolve) => (failed = resolve))
  const peer = new RelayPeer(
    {
      team,
      version: swarmVersion(),
      journal,
      onFailure: (why) => failed?.(why),
      async apply(item) {
        if (item.kind === 'entry') {
          // Not before the mirror has the member as a resident (spawn makes it after the link
          // connects): refused unacked, the link connects again and resends it, so an early entry
          // is never lost — and never written into an inbox this relay would send back out.
          const config = await readTeam(team, env).catch(() => undefined)
          const member = config?.members.find((m) => m.name === item.to)
          if (!member || !residentHere(member)) throw new Error(`${item.to} is not on this host yet`)
          await deliverRelayed(team, item.to, item.entry, env)
        } else if (item.kind === 'resolved') {
          fromLink.add(item.request.id)
          await recordLeadAnswer(team, item.request as ResolvedRequest, env)
        }
      },
    },
    io.write,
  )
  io.input.on('data', peer.reader())
  io.input.on('end', () => failed?.('the channel closed'))
  io.signal.addEventListener('abort', () => failed?.('stopped'), { once: true })
  const sentState = new Map<string, string>()
  const scan = async () => {
    const config = await readTeam(team, env)
    const residents = new Set(config.members.filter(residentHere).map((m) => m.name))
    for (const m of config.members) {
      if (residents.has(m.name)) continue
      const file = inboxPath(team, m.name, env)
      const fresh = (await readInbox(file)).filter((e) => e.read !== true)
      for (const entry of fresh) {
        const item = { kind: 'entry' as const, to: m.name, entry }
        if (!journal.has(item)) await peer.post(item)
      }
      if (fresh.length) await markRead(file, { msgIds: fresh.flatMap((e) => (e.msg_id ? [e.msg_id] : [])) })
    }
    const { requests } = await listPending(team, { env })
    for (const r of requests) {
      const { ageMs: _a, ...request } = r
      const item = { kind: 'pending' as const, request }
      if (!journal.has(item)) await peer.post(item)
    }
    for (const id of journal.sentRequests()) {
      if (fromLink.has(id) || journal.has({ kind: 'resolved', request: { id } })) continue
      const resolved = await readResolved(team, id, env)
      if (resolved) await peer.post({ kind: 'resolved', request: resolved })
    }
    for (const name of residents) {
      const state = await readMemberState(team, name, env).catch(() => undefined)
      const text = JSON.stringify(state)
      if (!state || sentState.get(name) === text) continue
      sentState.set(name, text)
      peer.sendState(name, state)
    }
    await journal.prune()
  }
  peer.start()
  const scanner = scanOnChange([inboxesDir(team, env), pendingPermissionsDir(team, env), resolvedPermissionsDir(team, env)], scan, (err) =>
    failed?.(`scan: ${(err as Error).message}`),
  )
  try {
    return await ended
  } finally {
    scanner.close()
  }
}

/**
 * Whether a mirror's member lives on this host: not the lead, not a roster entry for one who lives
 * elsewhere (`swarm remote spawn` marks those). A resident's inbox is its own, read here; anyone
 * else's is relayed out. Decided by the mark, never by how far its spawn got: a member being
 * started has no pane yet, and its first prompt, relayed here, must stay here.
 */
export function residentHere(m: Pick<TeamMember, 'name' | 'elsewhere'>): boolean {
  return m.name !== LEAD_NAME && m.elsewhere !== true
}

/** A host's answer (a member's withdrawal), recorded here on its stand-in request; one already recorded (or a request gone) is no error. */
export async function recordAnswer(team: string, r: ResolvedRequest, env: Env): Promise<void> {
  await answeredOnce(
    resolveRequest(
      team,
      r.id,
      {
        decision: r.decision,
        resolvedBy: r.resolvedBy,
        ...(r.always !== undefined && { always: r.always }),
        ...(r.feedback !== undefined && { feedback: r.feedback }),
        ...(r.updatedInput !== undefined && { updatedInput: r.updatedInput }),
      },
      env,
    ),
  )
}

/**
 * The lead's answer, on the host: recorded verbatim, its seal kept, so the member's own check
 * verifies it — an agent CLI's hook waits on this file alone (no team-lead message reaches it),
 * and an answer made again here, unsealed, would be refused as a teammate's forgery.
 */
async function recordLeadAnswer(team: string, r: ResolvedRequest, env: Env): Promise<void> {
  await answeredOnce(recordResolved(team, r, env))
}

/** An answer recorded already (or a request gone) is no error. */
async function answeredOnce(recording: Promise<unknown>): Promise<void> {
  try {
    await recording
  } catch (err) {
    if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err
  }
}
