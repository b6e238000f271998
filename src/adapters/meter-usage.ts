/**
 * What one model response used, read from its bytes as they pass through the metering proxy: an
 * SSE stream is read event by event (Anthropic `message_start` / `message_delta`, the Responses
 * API's `response.completed`, a Chat Completions chunk's `usage`), a JSON answer whole up to a cap.
 * Pure: it only reads what it is fed.
 */
import { type Usage, emptyUsage } from '../agent/pricing.js'

/** A JSON answer (not a stream) longer than this is passed on but not read: its usage is lost, and said so. */
export const MAX_METERED_JSON_BYTES = 8 * 1024 * 1024

export interface MeteredUsage {
  model: string
  usage: Usage
}

export interface UsageReader {
  feed(chunk: Buffer): void
  /** At the response's end: what it used, or undefined when it reported no usage. */
  end(): MeteredUsage | undefined
}

type Json = Record<string, unknown>

/** `sse`: the response's content type is text/event-stream; else its body is read as one JSON value. */
export function usageReader(sse: boolean, requestModel: string | undefined): UsageReader {
  let model = requestModel ?? ''
  let usage: Usage | undefined
  const take = (doc: unknown) => {
    const found = usageOf(doc)
    if (!found) return
    if (found.model) model = found.model
    // An Anthropic stream reports input in message_start and the (cumulative) rest in message_delta.
    usage = usage ? mergeUsage(usage, found.usage) : found.usage
  }
  const chunks: Buffer[] = []
  let size = 0
  let line = ''
  return {
    feed(chunk) {
      if (!sse) {
        size += chunk.length
        if (size <= MAX_METERED_JSON_BYTES) chunks.push(chunk)
        return
      }
      const lines = (line + chunk.toString('utf8')).split('\n')
      line = lines.pop() ?? ''
      for (const l of lines) readSseLine(l, take)
    },
    end() {
      if (sse) readSseLine(line, take)
      else if (size <= MAX_METERED_JSON_BYTES) take(parseJson(Buffer.concat(chunks).toString('utf8')))
      return usage && { model, usage }
    },
  }
}

function readSseLine(raw: string, take: (doc: unknown) => void): void {
  const l = raw.endsWith('\r') ? raw.slice(0, -1) : raw
  if (!l.startsWith('data:')) return
  const data = l.slice(5).trim()
  if (data && data !== '[DONE]') take(parseJson(data))
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined // not JSON (an HTML error page, a cut stream): no usage in it
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0)
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined)

/** The usage (and model) a response document or stream event carries, in whichever API's shape. */
function usageOf(doc: unknown): { model?: string; usage: Usage } | undefined {
  const d = obj(doc)
  if (!d) return undefined
  // Anthropic message_start / Responses API response.* events carry the document inside.
  const inner = obj(d.message) ?? obj(d.response)
  const holder = inner && obj(inner.usage) ? inner : d
  const u = obj(holder.usage)
  if (!u) return undefined
  const model = typeof holder.model === 'string' ? holder.model : undefined
  return { ...(model && { model }), usage: normalize(u) }
}

function normalize(u: Json): Usage {
  if ('prompt_tokens' in u || 'completion_tokens' in u) {
    // Chat Completions: prompt_tokens includes the cached ones.
    const cached = num(obj(u.prompt_tokens_details)?.cached_tokens)
    return {
      ...emptyUsage(),
      inputTokens: Math.max(0, num(u.prompt_tokens) - cached),
      outputTokens: num(u.completion_tokens),
      cacheReadTokens: cached,
    }
  }
  if (obj(u.input_tokens_details)) {
    // Responses API: input_tokens includes the cached ones.
    const cached = num(obj(u.input_tokens_details)?.cached_tokens)
    return { ...emptyUsage(), inputTokens: Math.max(0, num(u.input_tokens) - cached), outputTokens: num(u.output_tokens), cacheReadTokens: cached }
  }
  const long = num(obj(u.cache_creation)?.ephemeral_1h_input_tokens)
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    cacheReadTokens: num(u.cache_read_input_tokens),
    cacheWriteTokens: num(u.cache_creation_input_tokens),
    ...(long ? { cacheWrite1hTokens: long } : {}),
  }
}

/** A later event's counts replace an earlier one's where it gives them (Anthropic's are cumulative). */
function mergeUsage(a: Usage, b: Usage): Usage {
  const pick = (x: number, y: number) => (y > 0 ? y : x)
  const long = pick(a.cacheWrite1hTokens ?? 0, b.cacheWrite1hTokens ?? 0)
  return {
    inputTokens: pick(a.inputTokens, b.inputTokens),
    outputTokens: pick(a.outputTokens, b.outputTokens),
    cacheReadTokens: pick(a.cacheReadTokens, b.cacheReadTokens),
    cacheWriteTokens: pick(a.cacheWriteTokens, b.cacheWriteTokens),
    ...(long ? { cacheWrite1hTokens: long } : {}),
  }
}
