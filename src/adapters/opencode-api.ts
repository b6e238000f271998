/**
 * The HTTP API opencode's TUI serves when started with `--port` (verified on opencode 1.18.33):
 * `/tui/append-prompt` + `/tui/submit-prompt` (and `/tui/clear-prompt`) type into its prompt box,
 * `/permission/{id}/reply` answers a permission request, and `/event` is its SSE event stream
 * (`data: {"type": …, "properties": …}` frames). Requests carry the server's basic-auth password.
 */
import net from 'node:net'
import { z } from 'zod'
import { onAbort } from '../util/abort.js'

/** Where the teammate's opencode server listens (set by the adapter, read by its pane wrapper). */
export const OPENCODE_URL_ENV = 'SWARM_OPENCODE_URL'
/** opencode's own variable: its server then requires basic auth (user `opencode`). */
export const OPENCODE_PASSWORD_ENV = 'OPENCODE_SERVER_PASSWORD'

const REQUEST_MS = 5_000
const FIRST_EVENT_MS = 2_000

export const OpencodeEvent = z.looseObject({ type: z.string(), properties: z.record(z.string(), z.unknown()).default({}) })
export type OpencodeEvent = z.infer<typeof OpencodeEvent>

export type PermissionReply = 'once' | 'always' | 'reject'

export class OpencodeApi {
  constructor(
    readonly url: string,
    private readonly password?: string,
  ) {}

  /** The client of the teammate whose pane environment names the server; undefined elsewhere. */
  static fromEnv(env: NodeJS.ProcessEnv): OpencodeApi | undefined {
    const url = env[OPENCODE_URL_ENV]
    return url ? new OpencodeApi(url, env[OPENCODE_PASSWORD_ENV] || undefined) : undefined
  }

  appendPrompt(text: string): Promise<void> {
    return this.post('/tui/append-prompt', { text })
  }

  submitPrompt(): Promise<void> {
    return this.post('/tui/submit-prompt')
  }

  clearPrompt(): Promise<void> {
    return this.post('/tui/clear-prompt')
  }

  replyPermission(id: string, reply: PermissionReply, message?: string): Promise<void> {
    return this.post(`/permission/${encodeURIComponent(id)}/reply`, { reply, ...(message !== undefined && { message }) })
  }

  /**
   * Reads `/event` until `signal` aborts or the stream ends, handing each event to `onEvent`
   * (awaited in order). Resolves when the stream ends; rejects when it cannot connect, or when
   * no event came within `firstEventMs` — opencode 1.18.33 was seen holding a connection made
   * while it was still starting open without ever answering it.
   */
  async events(onEvent: (e: OpencodeEvent) => Promise<void> | void, signal: AbortSignal, firstEventMs = FIRST_EVENT_MS): Promise<void> {
    const own = new AbortController()
    // Already aborted (closed while reconnecting): no connection is made.
    const removeAbort = onAbort(signal, () => own.abort(signal.reason))
    let heard = false
    const watchdog = setTimeout(() => {
      if (!heard) own.abort(new Error(`no event within ${firstEventMs} ms`))
    }, firstEventMs)
    try {
      const res = await fetch(`${this.url}/event`, { headers: this.headers(), signal: own.signal })
      if (!res.ok || !res.body) throw new Error(`opencode /event answered ${res.status}`)
      const decoder = new TextDecoder()
      let buffer = ''
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = parseFrame(buffer.slice(0, end))
          buffer = buffer.slice(end + 2)
          if (!event) continue
          heard = true
          await onEvent(event)
        }
      }
    } finally {
      clearTimeout(watchdog)
      removeAbort()
    }
  }

  /** Sessions busy right now (`/session/status` lists only those that are not idle). */
  async busySessions(): Promise<string[]> {
    const status = z.record(z.string(), z.looseObject({ type: z.string() })).parse(await this.get('/session/status'))
    return Object.entries(status)
      .filter(([, s]) => s.type !== 'idle')
      .map(([id]) => id)
  }

  /**
   * The user texts of the most recently updated top-level session, newest last (each message's
   * text parts joined): what opencode really holds as submitted, whatever its events said.
   */
  async lastUserTexts(): Promise<string[]> {
    const sessions = z
      .array(z.looseObject({ id: z.string(), parentID: z.string().optional(), time: z.looseObject({ updated: z.number() }).optional() }))
      .parse(await this.get('/session'))
      .filter((s) => s.parentID === undefined)
      .sort((a, b) => (b.time?.updated ?? 0) - (a.time?.updated ?? 0))
    if (!sessions.length) return []
    const messages = z
      .array(
        z.looseObject({
          info: z.looseObject({ role: z.string() }),
          parts: z.array(z.looseObject({ type: z.string(), text: z.string().optional(), synthetic: z.boolean().optional() })).default([]),
        }),
      )
      .parse(await this.get(`/session/${encodeURIComponent(sessions[0].id)}/message`))
    return messages
      .filter((m) => m.info.role === 'user')
      .map((m) =>
        m.parts
          .filter((p) => p.type === 'text' && p.synthetic !== true)
          .map((p) => p.text ?? '')
          .join('\n'),
      )
  }

  /** How many sessions this instance has (one once its first prompt was submitted). */
  async sessionCount(): Promise<number> {
    return z.array(z.unknown()).parse(await this.get('/session')).length
  }

  private async get(route: string): Promise<unknown> {
    const res = await fetch(`${this.url}${route}`, { headers: this.headers(), signal: AbortSignal.timeout(REQUEST_MS) })
    if (!res.ok) throw new Error(`opencode ${route} answered ${res.status}`)
    return res.json()
  }

  private headers(): Record<string, string> {
    return this.password ? { authorization: `Basic ${Buffer.from(`opencode:${this.password}`).toString('base64')}` } : {}
  }

  private async post(route: string, body?: unknown): Promise<void> {
    const res = await fetch(`${this.url}${route}`, {
      method: 'POST',
      headers: { ...this.headers(), ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_MS),
    })
    const text = await res.text()
    if (!res.ok || text.trim() === 'false') throw new Error(`opencode ${route} answered ${res.status} ${text.slice(0, 200)}`)
  }
}

/** One SSE frame's `data:` lines as an event; undefined for a comment, a keep-alive or foreign data. */
function parseFrame(frame: string): OpencodeEvent | undefined {
  const data = frame
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trimStart())
    .join('\n')
  if (!data) return undefined
  try {
    const parsed = OpencodeEvent.safeParse(JSON.parse(data))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })
}
