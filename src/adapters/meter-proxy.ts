/**
 * The metering proxy: how an agent-CLI teammate's model requests are counted against its budgets.
 * It runs in the teammate's pane wrapper beside its relay, listens on 127.0.0.1 under a path only
 * that teammate is given (`/<token>/…`), asks the member's SpendMeter before each request — once a
 * budget is spent it answers in the provider's own error shape and forwards nothing — and forwards
 * the rest to the real upstream unchanged (bodies streamed both ways, SSE never buffered), reading
 * the usage as it passes and recording it through the same meter.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { errorMessage } from '../errors.js'
import type { SpendMeter } from '../agent/spend-meter.js'
import { usageReader } from './meter-usage.js'
import type { ModelApi } from './types.js'

export interface MeterProxyOptions {
  api: ModelApi
  /** The provider's base URL (`https://api.anthropic.com`, `https://api.openai.com/v1`): a request for `/<token>/x` goes to `<upstream>/x`. */
  upstream: string
  meter: SpendMeter
  /** The provider key sent upstream in place of `keyStandIn` (the CLI never holds it). */
  key?: { value: string; standIn: string }
}

export interface MeterProxy {
  /** `http://127.0.0.1:<port>/<token>`: the base URL the CLI is pointed at, in place of `upstream`. */
  url: string
  /** The stand-in the CLI holds instead of the provider key (when one is hidden). */
  keyStandIn?: string
  close(): Promise<void>
}

/** Request headers not passed on: hop-by-hop ones, and the encoding (the proxy must read the answer's usage). */
const DROPPED_REQUEST_HEADERS = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'accept-encoding'])
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding'])

export async function startMeterProxy(o: MeterProxyOptions): Promise<MeterProxy> {
  const token = randomBytes(24).toString('hex')
  const prefix = Buffer.from(`/${token}/`)
  const upstream = new URL(o.upstream.endsWith('/') ? o.upstream : `${o.upstream}/`)
  const sockets = new Set<Socket>()
  const server = http.createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      // The answer was under way (its headers sent): only cutting it tells the CLI it failed.
      if (res.headersSent) res.destroy()
      else answerError(res, o.api, 502, `swarm's metering proxy could not reach ${upstream.origin}: ${errorMessage(err)}`)
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '/'
    const head = Buffer.from(url.slice(0, prefix.length))
    if (head.length !== prefix.length || !timingSafeEqual(head, prefix)) {
      req.resume()
      answerError(res, o.api, 404, 'not found')
      return
    }
    const refused = await o.meter.check()
    if (refused) {
      req.resume()
      answerError(res, o.api, 400, `${refused} — the team lead can raise it with \`swarm budget\``)
      return
    }
    const target = new URL(url.slice(prefix.length), upstream)
    const headers: http.OutgoingHttpHeaders = {}
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED_REQUEST_HEADERS.has(k)) headers[k] = v
    headers['accept-encoding'] = 'identity'
    if (o.key) swapKey(headers, o.key)
    const send = target.protocol === 'https:' ? https.request : http.request
    await new Promise<void>((resolve, reject) => {
      // What the answer reported is recorded once, when it ends or is cut (a CLI may close the
      // connection as soon as it has read the stream's last event, before the proxy ends it).
      let reader: ReturnType<typeof usageReader> | undefined
      const settle = () => {
        const used = reader?.end()
        reader = undefined
        if (used) o.meter.record(used.model, used.usage)
      }
      const up = send(target, { method: req.method, headers }, (answer) => {
        const reply: http.OutgoingHttpHeaders = {}
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !DROPPED_RESPONSE_HEADERS.has(k)) reply[k] = v
        res.writeHead(answer.statusCode ?? 502, reply)
        res.flushHeaders()
        reader = usageReader(String(answer.headers['content-type'] ?? '').includes('text/event-stream'), undefined)
        answer.on('data', (chunk: Buffer) => {
          reader?.feed(chunk)
          res.write(chunk)
        })
        answer.on('end', () => {
          settle()
          res.end()
          resolve()
        })
        answer.on('close', settle)
        answer.on('error', reject)
      })
      up.on('error', reject)
      // The CLI gave up (an interrupted turn): so does the request upstream; what the answer reported so far counts.
      res.on('close', () => {
        if (!res.writableFinished) up.destroy()
        settle()
        resolve()
      })
      req.pipe(up)
    })
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    ...(o.key && { keyStandIn: o.key.standIn }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** The stand-in, wherever the CLI sends its key (x-api-key, a Bearer token), becomes the key. */
function swapKey(headers: http.OutgoingHttpHeaders, key: { value: string; standIn: string }): void {
  for (const name of ['x-api-key', 'authorization', 'api-key']) {
    const v = headers[name]
    if (typeof v === 'string' && v.includes(key.standIn)) headers[name] = v.replace(key.standIn, key.value)
  }
}

/** An error as the provider itself would send it, so the CLI shows it and ends its turn. */
function answerError(res: http.ServerResponse, api: ModelApi, status: number, message: string): void {
  const body =
    api === 'anthropic-messages'
      ? { type: 'error', error: { type: status === 404 ? 'not_found_error' : status === 400 ? 'invalid_request_error' : 'api_error', message } }
      : {
          error: {
            message,
            type: status === 400 ? 'invalid_request_error' : 'server_error',
            code: status === 400 ? 'budget_exhausted' : null,
            param: null,
          },
        }
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}
