import type { ServerResponse } from 'node:http'

/**
 * Server-Sent Events to the open pages: one hub per stream, each event written to every client
 * at once, a comment line now and then so proxies and phones keep the connection, and a client
 * dropped when its connection closes. The server pushes; no page polls.
 */

/** A keep-alive comment this often; an idle page costs the server one write per interval. */
export const SSE_KEEPALIVE_MS = 25_000

export class SseHub {
  private readonly clients = new Set<ServerResponse>()
  private readonly keepAlive: NodeJS.Timeout

  constructor() {
    this.keepAlive = setInterval(() => this.write(':\n\n'), SSE_KEEPALIVE_MS)
    this.keepAlive.unref()
  }

  get size(): number {
    return this.clients.size
  }

  /** Starts the event stream on `res`, sends it `first` (the current state), and keeps it until it closes. */
  add(res: ServerResponse, first?: { event: string; data: unknown }): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' })
    res.flushHeaders()
    this.clients.add(res)
    res.on('close', () => this.clients.delete(res))
    if (first) res.write(frame(first.event, first.data))
  }

  send(event: string, data: unknown): void {
    if (this.clients.size) this.write(frame(event, data))
  }

  close(): void {
    clearInterval(this.keepAlive)
    for (const res of this.clients) res.end()
    this.clients.clear()
  }

  private write(chunk: string): void {
    for (const res of this.clients) res.write(chunk)
  }
}

/** One SSE event: JSON on one `data:` line (JSON.stringify escapes every newline). */
export function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}
