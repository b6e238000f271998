import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import os from 'node:os'

/**
 * Who may use `swarm web`: the holder of the printed token (exchanged once for an HttpOnly,
 * SameSite=Strict session cookie) and — when the server listens beyond loopback — who also knows
 * the passphrase (scrypt; kept only as a salted hash; every failure counts toward a lockout, and
 * such a session is bound to the address it logged in from). Every request's Host must name this
 * server (no DNS rebinding) and every state-changing one must come from its own Origin (no CSRF).
 */

export const COOKIE_NAME = 'swarm_web'
/** Failed logins from one address before that address is refused for LOCKOUT_MS. */
export const MAX_FAILURES = 5
/** Failed logins from all addresses together within LOCKOUT_MS before every login is refused: many addresses guessing. */
export const GLOBAL_MAX_FAILURES = 20
export const LOCKOUT_MS = 5 * 60_000
const SCRYPT_KEYLEN = 32

/** A secret for a URL or a cookie: 192 random bits, base64url. */
export function newSecret(): string {
  return randomBytes(24).toString('base64url')
}

/** True when `a` and `b` are the same string, in time that does not depend on where they differ. */
export function sameSecret(a: string | undefined, b: string): boolean {
  if (a === undefined) return false
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function scryptKey(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(secret, salt, SCRYPT_KEYLEN, (err, key) => (err ? reject(err) : resolve(key))))
}

/** A passphrase as kept in memory: its scrypt hash with a random salt. */
export interface PassphraseHash {
  salt: Buffer
  key: Buffer
}

export async function hashPassphrase(passphrase: string): Promise<PassphraseHash> {
  const salt = randomBytes(16)
  return { salt, key: await scryptKey(passphrase, salt) }
}

export async function verifyPassphrase(hash: PassphraseHash, attempt: string): Promise<boolean> {
  const key = await scryptKey(attempt, hash.salt)
  return timingSafeEqual(key, hash.key)
}

/**
 * Counts failed logins per client address: past MAX_FAILURES that address is refused until
 * LOCKOUT_MS has passed since its last failure — one guessing client does not lock the others
 * out. A global cap stops guessing spread over many addresses: GLOBAL_MAX_FAILURES failures
 * within LOCKOUT_MS refuse every login until the oldest of them is that old. A refused attempt is
 * not tried, so it counts nothing; what is kept is bounded by the cap (entries expire).
 */
export class Lockout {
  private readonly byAddress = new Map<string, { failures: number; last: number }>()
  /** Times of the recent failures from any address, oldest first (at most GLOBAL_MAX_FAILURES). */
  private recent: number[] = []
  constructor(private readonly now: () => number = Date.now) {}

  /** Why a login from `address` is refused now: its own failures, everyone's, or undefined. */
  locked(address: string): 'address' | 'everyone' | undefined {
    this.expire()
    if (this.recent.length >= GLOBAL_MAX_FAILURES) return 'everyone'
    return (this.byAddress.get(address)?.failures ?? 0) >= MAX_FAILURES ? 'address' : undefined
  }
  fail(address: string): void {
    const t = this.now()
    const a = this.byAddress.get(address) ?? { failures: 0, last: t }
    this.byAddress.set(address, { failures: a.failures + 1, last: t })
    this.recent = [...this.recent, t].slice(-GLOBAL_MAX_FAILURES)
  }
  succeed(address: string): void {
    this.byAddress.delete(address)
  }

  private expire(): void {
    const since = this.now() - LOCKOUT_MS
    this.recent = this.recent.filter((t) => t > since)
    for (const [k, a] of this.byAddress) if (a.last <= since) this.byAddress.delete(k)
  }
}

/** A client's address as counted: an IPv4 address mapped into IPv6 is the IPv4 address. */
export function clientAddress(req: IncomingMessage): string {
  const a = req.socket.remoteAddress ?? 'unknown'
  return a.startsWith('::ffff:') ? a.slice('::ffff:'.length) : a
}

interface Session {
  /** Set in passphrase mode: the session is good from this address only. */
  address?: string
}

/** The server's sessions, in memory only: a restart logs everyone out. */
export class Sessions {
  private readonly sessions = new Map<string, Session>()

  create(address?: string): string {
    const id = newSecret()
    this.sessions.set(id, address === undefined ? {} : { address })
    return id
  }

  /** The request's session is known (and, if bound, used from its address). */
  valid(req: IncomingMessage): boolean {
    const id = cookieOf(req, COOKIE_NAME)
    const s = id === undefined ? undefined : this.sessions.get(id)
    return s !== undefined && (s.address === undefined || s.address === req.socket.remoteAddress)
  }
}

/** The session cookie's Set-Cookie value: never readable by script, never sent by another site. */
export function sessionCookie(id: string): string {
  return `${COOKIE_NAME}=${id}; HttpOnly; SameSite=Strict; Path=/`
}

export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/**
 * The Host values that name this server: its loopback names and the address it is bound to (a
 * wildcard bind: each address of this machine's interfaces). A name a DNS record points here is not one.
 */
export function allowedHosts(host: string, port: number): Set<string> {
  const withPort = (a: string) => (a.includes(':') ? `[${a}]:${port}` : `${a}:${port}`)
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, withPort(host)])
  if (host === '0.0.0.0' || host === '::')
    for (const list of Object.values(os.networkInterfaces())) for (const i of list ?? []) hosts.add(withPort(i.address))
  return new Set([...hosts].map((h) => h.toLowerCase()))
}

/** The request's Host names this server (a rebound DNS name does not). */
export function hostAllowed(req: IncomingMessage, hosts: Set<string>): boolean {
  return req.headers.host !== undefined && hosts.has(req.headers.host.toLowerCase())
}

/**
 * A state-changing request comes from this server's own page: its Origin is `http://<its Host>`
 * (browsers send Origin with every POST), and Sec-Fetch-Site, when sent, says same-origin.
 */
export function sameOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin') return false
  const origin = req.headers.origin
  return origin !== undefined && req.headers.host !== undefined && origin === `http://${req.headers.host}`
}

/** Loopback: 127.0.0.0/8, ::1, localhost. Anything else reaches other machines. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}
