/**
 * One loopback server for the APIs other agent CLIs speak — OpenAI Responses (Codex), Chat
 * Completions (opencode, pi), Gemini (Gemini CLI) — playing an AgentScript, streaming included,
 * and logging every request in a protocol-neutral form (what was submitted, which tool result)
 * so tests can count each prompt's submissions. Any non-empty key is accepted; none gets a 401.
 */
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { type AgentReply, AgentScriptPlayer, type AgentScriptInput, type AgentTurnView } from './agent-script.js'
import { chatChunks, chatCompletion, chatView } from './chat-api.js'
import { geminiResponse, geminiView } from './gemini-api.js'
import { responsesEvents, responsesView } from './responses-api.js'
import { flattenHeaders, readBody } from './http-request.js'

type Json = Record<string, unknown>
export type AgentApi = 'responses' | 'chat' | 'gemini'

/** One model request as the server saw it. `aux` requests (token counts, JSON side queries) are not turns. */
export interface AgentApiRequest {
  api: AgentApi | 'other'
  path: string
  receivedAt: number
  stream: boolean
  aux: boolean
  view?: AgentTurnView
  reply?: AgentReply
  status: number
  /** Request headers, lower-cased (for auth and agent attribution checks). */
  headers: Record<string, string>
  /** The parsed request body. */
  body?: unknown
}

export interface AgentApiServer {
  /** `http://<host>:<port>` (127.0.0.1 unless `host` was given) */
  url: string
  port: number
  readonly requests: AgentApiRequest[]
  /** Replaces the script (and forgets how often rules played). */
  setScript(script: AgentScriptInput): void
  /** Turns whose last user text contains `needle` (the submissions of one message). */
  submissionsOf(needle: string): AgentApiRequest[]
  close(): Promise<void>
}

export async function startAgentApiServer(
  options: {
    script?: AgentScriptInput
    port?: number
    /** The address to listen on (default 127.0.0.1): a test host in another network namespace reaches this side's veth address. */
    host?: string
  } = {},
): Promise<AgentApiServer> {
  const host = options.host ?? '127.0.0.1'
  let player = new AgentScriptPlayer(options.script)
  const requests: AgentApiRequest[] = []
  const sockets = new Set<Socket>()
  let seq = 0

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const raw = await readBody(req)
    const headers = flattenHeaders(req.headers)
    const record: AgentApiRequest = {
      api: apiOf(url.pathname),
      path: url.pathname,
      receivedAt: Date.now(),
      stream: false,
      aux: false,
      status: 200,
      headers,
    }
    requests.push(record)
    const json = (status: number, body: unknown) => {
      record.status = status
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (raw === undefined) return json(413, { error: { message: 'request body too large' } })
    if (!authenticated(headers, url)) return json(401, { error: { message: 'missing API key', type: 'authentication_error' } })
    if (req.method === 'GET' && /\/models\/?$/.test(url.pathname))
      return json(200, { object: 'list', data: [{ id: 'loopback', object: 'model', owned_by: 'swarm' }], models: [{ name: 'models/loopback' }] })
    let body: Json = {}
    try {
      body = raw ? (JSON.parse(raw) as Json) : {}
    } catch {
      return json(400, { error: { message: 'the request body is not valid JSON' } })
    }
    record.body = body
    const answerAux = (view: AgentTurnView): boolean => {
      // A request without tools is a CLI's side query (a session title, a summary): answered, not a turn.
      if (view.tools.length > 0) return false
      record.aux = true
      return true
    }
    const id = `lb${++seq}`
    const model = typeof body.model === 'string' ? body.model : (/models\/([^:/]+)/.exec(url.pathname)?.[1] ?? 'loopback')
    const common = { id, model, inputChars: raw.length }
    if (record.api === 'responses') {
      record.view = responsesView(body)
      record.stream = body.stream !== false
      const reply = answerAux(record.view) ? { text: 'Loopback session' } : player.reply(record.view)
      record.reply = reply
      const events = responsesEvents(reply, common)
      if (!record.stream) return json(200, events[events.length - 1].data.response)
      return sse(
        res,
        events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`),
      )
    }
    if (record.api === 'chat') {
      record.view = chatView(body)
      record.stream = body.stream === true
      if (answerAux(record.view)) {
        const reply = { text: 'Loopback session' }
        return record.stream
          ? sse(res, [...chatChunks(reply, common).map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'])
          : json(200, chatCompletion(reply, common))
      }
      const reply = player.reply(record.view)
      record.reply = reply
      if (!record.stream) return json(200, chatCompletion(reply, common))
      return sse(res, [...chatChunks(reply, common).map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'])
    }
    if (record.api === 'gemini') {
      if (url.pathname.endsWith(':countTokens')) {
        record.aux = true
        return json(200, { totalTokens: Math.ceil(raw.length / 4) })
      }
      record.view = geminiView(body)
      record.stream = url.pathname.endsWith(':streamGenerateContent')
      const config = (body.generationConfig ?? {}) as Json
      if (!record.stream && (config.responseMimeType === 'application/json' || config.responseJsonSchema || config.responseSchema)) {
        // Gemini CLI's side queries (next speaker, loop checks) want JSON; "user speaks next" ends the turn.
        record.aux = true
        return json(200, geminiResponse({ text: JSON.stringify({ next_speaker: 'user', reasoning: 'loopback: the turn is complete' }) }, common))
      }
      const reply = player.reply(record.view)
      record.reply = reply
      const response = geminiResponse(reply, common)
      return record.stream ? sse(res, [`data: ${JSON.stringify(response)}\n\n`]) : json(200, response)
    }
    return json(404, { error: { message: `${req.method} ${url.pathname} is not served by the loopback agent APIs` } })

    function sse(r: http.ServerResponse, frames: string[]): void {
      r.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      for (const f of frames) r.write(f)
      r.end()
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy()
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `loopback server error: ${(err as Error).message}` } }))
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    setScript(script) {
      player = new AgentScriptPlayer(script)
    },
    submissionsOf(needle) {
      return requests.filter((r) => !r.aux && r.view?.lastUser !== undefined && r.view.toolResult === undefined && r.view.lastUser.includes(needle))
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      for (const s of sockets) s.destroy()
      await closed
    },
  }
}

function apiOf(pathname: string): AgentApi | 'other' {
  if (pathname.endsWith('/responses')) return 'responses'
  if (pathname.endsWith('/chat/completions')) return 'chat'
  if (/\/models\/[^/]+:(streamGenerateContent|generateContent|countTokens)$/.test(pathname)) return 'gemini'
  return 'other'
}

function authenticated(headers: Record<string, string>, url: URL): boolean {
  if (/^Bearer\s+\S/i.test(headers.authorization ?? '')) return true
  return Boolean(headers['x-goog-api-key']?.trim() || headers['x-api-key']?.trim() || url.searchParams.get('key'))
}
