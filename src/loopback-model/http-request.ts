import type http from 'node:http'

/**
 * What the loopback servers (Messages API, and the OpenAI / Gemini ones for agent CLIs) read off a
 * request: its headers flattened to one string each, and its body up to a size limit.
 */
export const MAX_BODY_BYTES = 32 * 1024 * 1024

export function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

/** The body as text; undefined when it exceeds MAX_BODY_BYTES. */
export async function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
