import { UsageError } from '../errors.js'

/*
 * A `--host` value (`[user@]host[:port]`, or a Host of the ssh config): parsed and checked before
 * anything reaches ssh, so no value can read as an ssh option or a shell word.
 */

/** A remote machine as swarm names it. */
export interface RemoteHost {
  /** As the user wrote it, normalised (`user@host:port`): the member record's `host`, the key of its connection. */
  spec: string
  /** `user@host` or `host`: ssh's destination. */
  destination: string
  port?: number
}

/** A host member's recorded cwd when none was given: its HOME there (the host's swarm starts it from there). */
export const REMOTE_HOME_CWD = '~'

const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/

/** Parses `[user@]host[:port]`; UsageError (exit 2) for anything else. */
export function parseHost(value: string): RemoteHost {
  const bad = (why: string) =>
    new UsageError(`invalid host ${JSON.stringify(value)}: ${why}`, { hint: 'use user@host, user@host:port or a Host of your ssh config' })
  const at = value.lastIndexOf('@')
  const user = at >= 0 ? value.slice(0, at) : undefined
  const rest = at >= 0 ? value.slice(at + 1) : value
  const colon = rest.lastIndexOf(':')
  const name = colon >= 0 ? rest.slice(0, colon) : rest
  const portText = colon >= 0 ? rest.slice(colon + 1) : undefined
  if (user !== undefined && !USER.test(user)) throw bad('the user name')
  if (!NAME.test(name)) throw bad('the host name')
  let port: number | undefined
  if (portText !== undefined) {
    port = Number(portText)
    if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65_535) throw bad('the port')
  }
  const destination = user === undefined ? name : `${user}@${name}`
  return { spec: port === undefined ? destination : `${destination}:${port}`, destination, ...(port !== undefined && { port }) }
}
