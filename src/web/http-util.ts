import type { IncomingMessage, ServerResponse } from 'node:http'
import type { z } from 'zod'
import { UsageError } from '../errors.js'

/** Small pieces of node:http the routes share: security headers on every answer, JSON in and out. */

/** The most a request body may hold: an answer's feedback or a message, not a file. */
export const MAX_BODY_BYTES = 64 * 1024

/** Sent with every response: no framing, no sniffing, no referrer (the first URL holds the token), no caching. */
export const BASE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
} as const

/** The page's policy: its own script and styles only (xterm.js adds <style> elements), nothing from elsewhere. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
  res.end(JSON.stringify(value))
}

export function sendText(res: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type })
  res.end(text)
}

/** The request's JSON body, checked against `schema`; a UsageError for a body too large, not JSON or of the wrong shape. */
export async function readJson<T extends z.ZodType>(req: IncomingMessage, schema: T): Promise<z.infer<T>> {
  if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new UsageError('expected a JSON body (content-type application/json)')
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new UsageError(`request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  let value: unknown
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new UsageError('the request body is not JSON')
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new UsageError(`bad request: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`)
  return parsed.data
}

/** Reads a url-encoded form body (the login form), within MAX_BODY_BYTES. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new UsageError(`request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}
