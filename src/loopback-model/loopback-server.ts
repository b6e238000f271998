import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { type Scenario, type ScenarioInput, loadScenarioFile, parseScenario } from './scenario.js'
import { type MessagesRequestBody, type PlayedStep, ScriptPlayer } from './script-player.js'
import { breakpointProblem, PromptCache, type PromptUsage } from './cache.js'
import { promptBlocks } from './tokens.js'
import { contextWindowFor, promptTooLongMessage } from './window.js'
import { type LoopbackMessage, buildMessage, encodeSse, errorBody, IdSource, messageEvents } from './response.js'
import type { ErrorSpec } from './scenario.js'
import { MAX_BODY_BYTES, flattenHeaders, readBody } from './http-request.js'

/** Bodies above this are refused with 413, like the API's own limit. */

/** One request as the server received it, for tests to inspect. */
export interface RecordedRequest {
  /** The `request-id` header the server answered with. */
  requestId: string
  method: string
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string
  /** Lower-cased header names. */
  headers: Record<string, string>
  /** The parsed JSON body (undefined when there was none or it did not parse). */
  body: unknown
  /** `Date.now()` when the request's body had arrived. */
  receivedAt: number
  /** `Date.now()` when the whole answer had been handed to the socket (unset while it is pending, or when cut). */
  answeredAt?: number
  /** The agent the scenario attributed the request to. */
  agent?: string
  stream: boolean
  /** Which scenario entry answered (for /v1/messages). */
  played?: PlayedStep
  /** The HTTP status sent. */
  status?: number
  /** True when the client went away before the response ended (an aborted stream). */
  clientClosed: boolean
  /** The estimated prompt size (tools + system + messages) of a Messages request. */
  promptTokens?: number
  /** The usage the answer reported (for a message). */
  usage?: LoopbackMessage['usage']
}

export interface LoopbackServerOptions {
  scenario?: Scenario | ScenarioInput
  scenarioFile?: string
  /** Default 0: any free port. */
  port?: number
  /** The address to listen on (default 127.0.0.1): a test host in another network namespace reaches this side's veth address. */
  host?: string
  onRequest?: (request: RecordedRequest) => void
  /** The context window of every model (default: by model name, see window.ts; the scenario's `contextWindow` too). */
  contextWindow?: number
  /** The prompt cache's clock (tests move time to expire entries). */
  now?: () => number
}

/** A running loopback Messages API. Point the SDK at `url` (`baseURL` / ANTHROPIC_BASE_URL). */
export interface LoopbackServer {
  /** `http://<host>:<port>` (127.0.0.1 unless `host` was given) */
  url: string
  port: number
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[]
  /** Called for each request once its body is parsed, before it is answered. */
  onRequest?: (request: RecordedRequest) => void
  /** Replaces the scenario and restarts every script from its first step. */
  setScenario(scenario: Scenario | ScenarioInput): void
  /** Stops listening and cuts open connections (streams in flight end at once). */
  close(): Promise<void>
}

/**
 * Starts a Messages-API-compatible server on 127.0.0.1 that plays a scenario: POST
 * /v1/messages (streaming SSE and not), POST /v1/messages/count_tokens. Any non-empty
 * `x-api-key` or `Authorization: Bearer` is accepted; none gets 401 authentication_error.
 * Every answer carries a `request-id` header.
 */
export async function startLoopbackServer(options: LoopbackServerOptions): Promise<LoopbackServer> {
  let scenario = options.scenarioFile ? await loadScenarioFile(options.scenarioFile) : parseScenario(options.scenario ?? {})
  let player = new ScriptPlayer(scenario)
  const ids = new IdSource()
  const sockets = new Set<Socket>()
  const closing = new AbortController()
  const requests: RecordedRequest[] = []
  // The cache outlives scenario changes, like the API's: it belongs to the server.
  const cache = new PromptCache(options.now)

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const requestId = ids.next('req')
    res.setHeader('request-id', requestId)
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const raw = await readBody(req)
    const record: RecordedRequest = {
      requestId,
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: flattenHeaders(req.headers),
      body: undefined,
      receivedAt: Date.now(),
      stream: false,
      clientClosed: false,
    }
    requests.push(record)
    res.on('finish', () => (record.answeredAt = Date.now()))
    res.on('close', () => {
      if (!res.writableFinished) record.clientClosed = true
    })
    const send = (status: number, body: object, headers: Record<string, string> = {}) => {
      record.status = status
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(JSON.stringify(body))
    }
    const fail = (status: number, message: string, type?: string) => send(status, errorBody({ status, message, type }, requestId))

    if (raw === undefined) return fail(413, `request body larger than ${MAX_BODY_BYTES} bytes`)
    if (raw.length > 0) {
      try {
        record.body = JSON.parse(raw)
      } catch {
        // answered with 400 below, once the request is authenticated and routed
      }
    }
    const body = (record.body ?? {}) as MessagesRequestBody
    record.stream = body.stream === true
    if (!isAuthenticated(record.headers)) {
      return fail(401, 'missing API key: send x-api-key or Authorization: Bearer', 'authentication_error')
    }
    const route = `${record.method} ${record.path}`
    if (route !== 'POST /v1/messages' && route !== 'POST /v1/messages/count_tokens') {
      return fail(404, `${route} is not served by the loopback model`, 'not_found_error')
    }
    if (raw.length > 0 && record.body === undefined) return fail(400, 'the request body is not valid JSON')
    const problem = validateMessagesBody(body, record.path.endsWith('count_tokens'))
    if (problem) return fail(400, problem)

    const blocks = promptBlocks(body)
    record.promptTokens = blocks.reduce((sum, b) => sum + b.tokens, 0)
    if (record.path.endsWith('count_tokens')) {
      callHook(record)
      return send(200, { input_tokens: record.promptTokens })
    }
    const refusal = breakpointProblem(blocks) ?? windowProblem(body.model!, record.promptTokens)
    if (refusal) {
      callHook(record)
      return fail(400, refusal)
    }
    const selection = player.select({ headers: record.headers, body })
    record.agent = player.agentOf({ headers: record.headers, body })
    record.played = selection.played
    callHook(record)
    if (!selection.response) return fail(400, `loopback scenario: ${selection.reason}`)
    const spec = selection.response
    const aborted = AbortSignal.any([closing.signal, closeSignal(res)])
    if (spec.delayMs && !(await sleep(spec.delayMs, aborted))) return
    if (spec.error) return sendError(spec.error)
    const model = scenario.model ?? body.model ?? 'loopback'
    const message = buildMessage(spec, { model, ids, prompt: cache.account(body.model!, blocks) })
    record.usage = message.usage
    if (!record.stream) return send(200, message)
    record.status = 200
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    for (const event of messageEvents(message)) {
      if (aborted.aborted) return
      res.write(encodeSse(event))
      if (spec.chunkDelayMs && !(await sleep(spec.chunkDelayMs, aborted))) return
    }
    res.end()

    function sendError(error: ErrorSpec): void {
      const headers: Record<string, string> = { ...error.headers }
      if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
      if (!(error.midStream && record.stream)) {
        send(error.status, errorBody(error, requestId), headers)
        return
      }
      // Mid-stream errors arrive after a 200 and message_start, as an `error` event.
      record.status = 200
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers })
      const start = buildMessage(
        { content: [] },
        { model: scenario.model ?? body.model ?? 'loopback', ids, prompt: uncached(record.promptTokens ?? 0) },
      )
      res.write(encodeSse(messageEvents(start)[0]!))
      res.end(encodeSse({ event: 'error', data: errorBody(error, requestId) }))
    }
  }

  const windowProblem = (model: string, tokens: number): string | undefined => {
    const maximum = contextWindowFor(model, options.contextWindow ?? scenario.contextWindow)
    return tokens > maximum ? promptTooLongMessage(tokens, maximum) : undefined
  }

  const callHook = (record: RecordedRequest) => {
    // A throwing hook is a bug in the test; let it surface as a 500 through the catch below.
    api.onRequest?.(record)
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify(errorBody({ status: 500, message: `loopback server error: ${(err as Error).message}` }, 'req_error')))
    })
  })
  httpServer.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject)
    httpServer.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      httpServer.off('error', reject)
      resolve()
    })
  })
  const port = (httpServer.address() as AddressInfo).port

  const api: LoopbackServer = {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    onRequest: options.onRequest,
    setScenario(next) {
      scenario = parseScenario(next)
      player = new ScriptPlayer(scenario)
    },
    async close() {
      closing.abort()
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()))
      for (const socket of sockets) socket.destroy()
      await closed
    },
  }
  return api
}

function uncached(tokens: number): PromptUsage {
  return {
    input_tokens: tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  }
}

function isAuthenticated(headers: Record<string, string>): boolean {
  if (headers['x-api-key']?.trim()) return true
  return /^Bearer\s+\S/i.test(headers.authorization ?? '')
}

function validateMessagesBody(body: MessagesRequestBody, countOnly: boolean): string | undefined {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required'
  if (!countOnly && typeof body.max_tokens !== 'number') return 'max_tokens: Field required'
  if (!Array.isArray(body.messages)) return 'messages: Field required'
  return undefined
}

function closeSignal(res: http.ServerResponse): AbortSignal {
  const controller = new AbortController()
  res.once('close', () => controller.abort())
  return controller.signal
}

/** Resolves true after `ms`, false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
