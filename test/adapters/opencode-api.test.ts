import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { OpencodeApi } from '../../src/adapters/opencode-api.js'

/** OpencodeApi.events against a real SSE server that never stops sending (as opencode's /event does). */
let server: http.Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

async function chattyServer(): Promise<{ url: string; connections: () => number }> {
  let connections = 0
  server = http.createServer((req, res) => {
    if (req.url !== '/event') return void res.writeHead(404).end()
    connections++
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    const beat = () => res.write(`data: ${JSON.stringify({ type: 'server.heartbeat', properties: {} })}\n\n`)
    beat()
    const timer = setInterval(beat, 20)
    res.on('close', () => clearInterval(timer))
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, connections: () => connections }
}

describe('OpencodeApi.events', () => {
  it('honours a signal that aborted before the call: no connection, no event, it ends at once', async () => {
    const s = await chattyServer()
    const api = new OpencodeApi(s.url)
    const closed = new AbortController()
    closed.abort(new Error('bridge closed'))
    let events = 0
    const ended = await Promise.race([
      api
        .events(() => void events++, closed.signal)
        .then(
          () => 'resolved',
          (err: Error) => `rejected: ${err.message}`,
        ),
      new Promise<string>((resolve) => setTimeout(() => resolve('hung'), 2_000).unref()),
    ])
    expect(ended).toBe('rejected: bridge closed')
    expect(events).toBe(0)
    expect(s.connections()).toBe(0)
  })

  it('stops reading when the signal aborts later', async () => {
    const s = await chattyServer()
    const api = new OpencodeApi(s.url)
    const stop = new AbortController()
    let events = 0
    const reading = api.events(() => {
      if (++events === 3) stop.abort(new Error('enough'))
    }, stop.signal)
    await expect(reading).rejects.toThrow('enough')
    expect(events).toBeGreaterThanOrEqual(3)
  })
})
