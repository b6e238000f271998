import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { ConflictError } from '../errors.js'
import { LEAD_NAME, inboxPath, inboxesDir, resolvedPermissionsDir, teamDir } from '../home/paths.js'
import type { Env } from '../home/env.js'
import { readResolved, writePending, type ResolvedRequest } from '../asks/store.js'
import { markDelivered, readInbox } from '../mailbox/inbox.js'
import { messageKey } from '../mailbox/entry.js'
import { delay } from '../process/delay.js'
import { ensureDir } from '../util/fs.js'
import { updateMemberState } from '../store/member-state.js'
import { readTeam } from '../teams/team-store.js'
import { connectionTo } from './connection.js'
import { deliverRelayed } from './deliver.js'
import { remoteSwarm } from './helper.js'
import type { RemoteHost } from './host.js'
import { Journal } from './journal.js'
import { takeLinkLease } from './lease.js'
import { RelayPeer } from './peer.js'
import { recordAnswer } from './relay.js'
import { scanOnChange } from './scanner.js'
import { swarmVersion } from './version.js'

/*
 * The local end of a team's relay to one host (`swarm remote link`, a process of its own, one per
 * team and host): it opens the relay over the host's connection, sends what the team's mailbox
 * holds for the members resident there and the lead's answers to their requests, and writes what
 * comes back — their messages, their requests (made pending here, standing in for the requester
 * while the link runs), their state. Dropped, it connects again (the pane on the host runs on).
 */

/** Waits between attempts to connect again: quick first (a dropped master), then every 2 s. */
const RECONNECT_MS = [100, 500, 1_000, 2_000] as const

/** The link's own directory (journal, pid file): under the team's, gone with it. */
export function linkDir(team: string, host: RemoteHost, env: Env): string {
  return path.join(teamDir(team, env), 'remote', createHash('sha256').update(host.spec).digest('hex').slice(0, 16))
}

export interface LinkEvents {
  /** A line for the link's log (connected, dropped, refused). */
  log(line: string): void
}

/**
 * The link's id, made once per team and host (`link.id`): its relay on the host is leased to it,
 * so the same link connecting again replaces its own old relay there, and another's is refused.
 */
async function linkId(dir: string): Promise<string> {
  const file = path.join(dir, 'link.id')
  await fs.writeFile(file, `${randomBytes(8).toString('hex')}\n`, { flag: 'wx', mode: 0o600 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err
  })
  return (await fs.readFile(file, 'utf8')).trim()
}

/** Runs until `signal` aborts; ConflictError when another link for the team and host runs. */
export async function runLink(team: string, host: RemoteHost, env: Env, signal: AbortSignal, events: LinkEvents): Promise<void> {
  const dir = linkDir(team, host, env)
  await ensureDir(dir)
  const lease = takeLinkLease(path.join(dir, 'link.lock'), team, host.spec)
  try {
    await linkUnderLease(team, host, env, signal, events, dir)
  } finally {
    lease.release()
  }
}

async function linkUnderLease(team: string, host: RemoteHost, env: Env, signal: AbortSignal, events: LinkEvents, dir: string): Promise<void> {
  const conn = connectionTo(host, env)
  const journal = await Journal.open(dir)
  const id = await linkId(dir)
  const fromHost = new Set<string>()
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      await conn.ensure()
    } catch (err) {
      events.log(`connect: ${(err as Error).message}`)
      await delay(RECONNECT_MS[Math.min(attempt, RECONNECT_MS.length - 1)]!, signal).catch(() => undefined)
      continue
    }
    const channel = await conn.open(remoteSwarm(env, ['remote', 'relay', '--team', team, '--link', id]))
    let fail: ((why: string) => void) | undefined
    const ended = new Promise<string>((resolve) => (fail = resolve))
    const peer = new RelayPeer(
      {
        team,
        version: swarmVersion(),
        journal,
        onFailure: (why) => fail?.(why),
        apply: async (item) => {
          if (item.kind === 'entry') await deliverRelayed(team, item.to, item.entry, env)
          else if (item.kind === 'pending') await standIn(team, host, item.request, env)
          else {
            fromHost.add(item.request.id)
            await recordAnswer(team, item.request as ResolvedRequest, env)
          }
        },
        onState: async (name, state) => {
          const { pid: _p, heartbeat: _h, since: _s, ...rest } = state
          await updateMemberState(team, name, { ...(rest as { status: 'idle' }), host: host.spec }, env, { create: true, replace: true })
        },
      },
      (text) => channel.child.stdin?.write(text),
    )
    channel.child.stdout?.on('data', peer.reader())
    let stderr = ''
    channel.child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2_000)))
    void channel.exited.then((s) => fail?.(`the channel ended (ssh exit ${s.code ?? s.signal})${stderr ? `: ${stderr.trim()}` : ''}`))
    const onAbort = () => fail?.('stopped')
    signal.addEventListener('abort', onAbort, { once: true })
    peer.start()
    const scan = () => scanLocal(team, host, journal, peer, fromHost, env)
    const scanner = scanOnChange([inboxesDir(team, env), resolvedPermissionsDir(team, env)], scan, (err) =>
      events.log(`scan: ${(err as Error).message}`),
    )
    events.log(`connected to ${host.spec}`)
    const why = await ended
    scanner.close()
    signal.removeEventListener('abort', onAbort)
    await channel.stop(500)
    events.log(`relay ended: ${why}`)
    // A relay that ended before its hello (refused on the host: another link's holds the team) is
    // tried again on the back-off; one that ran, at once.
    if (!peer.opened) {
      await delay(RECONNECT_MS[Math.min(attempt, RECONNECT_MS.length - 1)]!, signal).catch(() => undefined)
      continue
    }
    if (!signal.aborted) await delay(RECONNECT_MS[0], signal).catch(() => undefined)
    attempt = -1
  }
}

/** The host's members' messages and the answers to their requests, journaled and sent. */
async function scanLocal(team: string, host: RemoteHost, journal: Journal, peer: RelayPeer, fromHost: Set<string>, env: Env): Promise<void> {
  const config = await readTeam(team, env)
  for (const m of config.members) {
    if (m.name === LEAD_NAME || m.host !== host.spec) continue
    const file = inboxPath(team, m.name, env)
    const fresh = (await readInbox(file)).filter((e) => !journal.has({ kind: 'entry', to: m.name, entry: e }))
    for (const entry of fresh) await peer.post({ kind: 'entry', to: m.name, entry })
    // Delivered: the entry is in the journal, bound for the host's inbox.
    if (fresh.length) await markDelivered(file, fresh.map(messageKey))
  }
  for (const name of await fs.readdir(resolvedPermissionsDir(team, env)).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue
    const id = name.slice(0, -'.json'.length)
    if (fromHost.has(id) || journal.has({ kind: 'resolved', request: { id } })) continue
    const resolved = await readResolved(team, id, env).catch(() => undefined)
    if (resolved?.remoteHost === host.spec) await peer.post({ kind: 'resolved', request: resolved })
  }
  await journal.prune()
}

/**
 * A host member's request, pending here for the lead: the link stands in as its requester (a
 * sweep finds it alive while the link runs), the host and its own pid kept beside.
 */
async function standIn(team: string, host: RemoteHost, request: Record<string, unknown> & { id: string }, env: Env): Promise<void> {
  const { pid, pidStarted: _s, pidNs: _n, ...rest } = request
  try {
    await writePending(team, { ...(rest as Parameters<typeof writePending>[1]), pid: process.pid, remoteHost: host.spec, remotePid: pid }, env)
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err
  }
}
