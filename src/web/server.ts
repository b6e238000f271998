import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { UsageError, errorMessage } from '../errors.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { runNotifyCommand } from '../asks/notify-command.js'
import { ASSET_TYPES, loadAssets } from './assets.js'
import {
  Lockout,
  Sessions,
  allowedHosts,
  clientAddress,
  hashPassphrase,
  hostAllowed,
  isLoopback,
  newSecret,
  sameOrigin,
  sameSecret,
  sessionCookie,
  verifyPassphrase,
  type PassphraseHash,
} from './auth.js'
import { BASE_HEADERS, PAGE_CSP, readForm, sendJson, sendText } from './http-util.js'
import { LiveView } from './live.js'
import { loginHtml, pageHtml } from './page.js'
import { apiRoutes, errorStatus, type RouteContext } from './routes.js'
import { SseHub } from './sse.js'

/**
 * `swarm web`'s server (node:http): one page, its assets, one event stream of every team, and the
 * API of routes.ts — behind the token of the printed URL (and, beyond loopback, a passphrase).
 * Every request is checked in this order: its Host names this server; it has a session (or is the
 * token exchange or the login); a state-changing one comes from this server's own Origin. A
 * request that fails a check gets its status and a bare word, nothing else.
 */

export interface WebServerOptions {
  env: NodeJS.ProcessEnv
  /** Default 127.0.0.1. Any other address needs `passphrase`. */
  host?: string
  /** Default 0: any free port. */
  port?: number
  readOnly?: boolean
  passphrase?: string
  /** The token of the URL (default: random). */
  token?: string
  /** One line per act and per problem (default: nothing). */
  log?(line: string): void
}

export interface WebServer {
  /** The URL to open, token included. */
  url: string
  host: string
  port: number
  /** Open event streams (state and viewers): what the bench counts. */
  streams(): number
  close(): Promise<void>
}

/** Refuses a bind that would reach other machines without a passphrase, before anything listens. */
export function checkBind(host: string, passphrase: string | undefined): void {
  if (!isLoopback(host) && !passphrase)
    throw new UsageError(`swarm web on ${host} is reachable from other machines: it needs a passphrase`, {
      hint: 'set SWARM_WEB_PASSPHRASE (or --passphrase-file FILE), or leave out --host to stay on 127.0.0.1',
    })
}

export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const host = options.host ?? '127.0.0.1'
  checkBind(host, options.passphrase)
  const env = options.env
  const log = options.log ?? (() => undefined)
  const readOnly = options.readOnly === true
  const token = options.token ?? newSecret()
  const passphrase: PassphraseHash | undefined = options.passphrase ? await hashPassphrase(options.passphrase) : undefined
  const assets = await loadAssets()
  const sessions = new Sessions()
  const lockout = new Lockout()
  const state = new SseHub()
  const viewHubs = new Set<SseHub>()
  const live = new LiveView({
    env,
    onChange: (s) => state.send('state', s),
    onNewRequest: (team, r) => void runNotifyCommand({ team, ...r }, { env, onProblem: log }),
    onError: (err) => log(`warning: could not read the teams (${terminalSafe(errorMessage(err), { singleLine: true })})`),
  })
  await live.start()
  const routes = apiRoutes({ readOnly, viewHubs })
  const ctx: RouteContext = { env, log }
  let hosts = new Set<string>()

  const login = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req)
    const address = clientAddress(req)
    const locked = lockout.locked(address)
    if (locked) {
      log(`login refused from ${address}: ${locked === 'everyone' ? 'too many failed logins from all addresses' : 'locked out'}`)
      return sendText(res, 429, 'locked out: too many failed logins; try again later')
    }
    const ok =
      passphrase !== undefined &&
      sameSecret(form.get('token') ?? undefined, token) &&
      (await verifyPassphrase(passphrase, form.get('passphrase') ?? ''))
    if (!ok) {
      lockout.fail(address)
      log(`failed login from ${address}`)
      return sendText(res, 401, 'unauthorized')
    }
    lockout.succeed(address)
    log(`login from ${address}`)
    res.writeHead(303, { location: '/', 'set-cookie': sessionCookie(sessions.create(req.socket.remoteAddress)) })
    res.end()
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [k, v] of Object.entries(BASE_HEADERS)) res.setHeader(k, v)
    if (!hostAllowed(req, hosts)) return sendText(res, 421, 'misdirected request')
    const url = new URL(req.url ?? '/', 'http://swarm.invalid')
    const key = `${req.method} ${url.pathname}`
    const posting = req.method !== 'GET' && req.method !== 'HEAD'
    if (posting && !sameOrigin(req)) return sendText(res, 403, 'forbidden')
    if (key === 'POST /login') return login(req, res)
    if (!sessions.valid(req)) {
      // The token exchange: the printed URL's token for a session cookie, then the bare URL (the token leaves the address bar).
      if (key === 'GET /' && sameSecret(url.searchParams.get('token') ?? undefined, token)) {
        if (passphrase) return sendText(res, 200, loginHtml(token), 'text/html; charset=utf-8')
        res.writeHead(303, { location: '/', 'set-cookie': sessionCookie(sessions.create()) })
        return res.end()
      }
      return sendText(res, 401, 'unauthorized')
    }
    if (key === 'GET /') {
      res.setHeader('content-security-policy', PAGE_CSP)
      return sendText(res, 200, pageHtml({ readOnly }), 'text/html; charset=utf-8')
    }
    const asset = key.startsWith('GET /assets/') ? url.pathname.slice('/assets/'.length) : undefined
    if (asset !== undefined && ASSET_TYPES[asset]) return sendText(res, 200, assets.get(asset)!.toString('utf8'), ASSET_TYPES[asset])
    if (key === 'GET /api/events') return state.add(res, { event: 'state', data: live.snapshot })
    const route = routes.get(key)
    if (!route) return sendText(res, 404, 'not found')
    await route(req, res, url, ctx)
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (res.headersSent) return res.end()
      sendJson(res, errorStatus(err), { error: terminalSafe(errorMessage(err), { singleLine: true }) })
    })
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, host, () => resolve())
    })
  } catch (err) {
    await live.close()
    state.close()
    throw err
  }
  const port = (server.address() as AddressInfo).port
  hosts = allowedHosts(host, port)
  const shown = host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${shown}:${port}/?token=${token}`,
    host,
    port,
    streams: () => state.size + [...viewHubs].reduce((n, h) => n + h.size, 0),
    async close() {
      state.close()
      for (const h of viewHubs) h.close()
      viewHubs.clear()
      await live.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
