import { ConflictError } from '../errors.js'
import { waitForExit } from '../process/liveness.js'
import { type PidLock, tryPidLock } from '../process/pid-lock.js'
import { sendSignal } from '../process/signals.js'

/*
 * One relay per team and host, one link per team and host (process/pid-lock.ts): two would both
 * deliver — each scans the same inboxes and numbers into the same journal. A relay holds
 * `<mirror>/remote-relay/relay.pid` naming its link (`--link <id>`, the link's `link.id`); a link
 * holds `<link dir>/link.lock`. A second one is refused (exit 4) with the holder's pid — except a
 * relay started by the same link again (its old channel dropped before the old relay on the host
 * noticed): that one yields to it, so a reconnect never waits for sshd to time the old one out.
 */

/** How long the relay it replaces has to close before SIGKILL. */
const YIELD_MS = 3_000

/** Takes the relay's lease for `owner` (a link id), or throws ConflictError naming the other link's relay. */
export async function takeRelayLease(file: string, team: string, owner: string): Promise<PidLock> {
  for (let attempt = 0; ; attempt++) {
    const r = tryPidLock(file, owner)
    if ('lock' in r) return r.lock
    const { pid } = r.holder
    if (r.holder.owner !== owner || !owner || pid === process.pid || attempt >= 3) {
      throw new ConflictError('SWARM_RELAY_HELD', `team ${team} is relayed on this host already, for another link (relay pid ${pid})`, {
        hint: `two machines (or two state roots) relay one team here; stop the other one's team, or kill ${pid} on this host`,
      })
    }
    sendSignal(pid, 'SIGTERM')
    if (!(await waitForExit([pid], YIELD_MS))) {
      sendSignal(pid, 'SIGKILL')
      await waitForExit([pid], 1_000)
    }
  }
}

/** Takes the link's lease, or throws ConflictError naming the running link. */
export function takeLinkLease(file: string, team: string, host: string): PidLock {
  const r = tryPidLock(file)
  if ('lock' in r) return r.lock
  throw new ConflictError('SWARM_LINK_RUNNING', `team ${team} already has a link to ${host} running (pid ${r.holder.pid})`, {
    hint: `that one relays the team's mailbox there; stop it first (kill ${r.holder.pid})`,
  })
}
