import type { PromptUsage } from './cache.js'
import { estimateTextTokens } from './tokens.js'
import type { ErrorSpec, ResponseSpec } from './scenario.js'

/** A Messages API `Message`, as the loopback server sends it. */
export interface LoopbackMessage {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: ({ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> })[]
  stop_reason: string
  stop_sequence: null
  usage: {
    input_tokens: number
    output_tokens: number
    cache_creation_input_tokens: number
    cache_read_input_tokens: number
    cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number }
  }
}

/** One server-sent event. */
export interface SseEvent {
  event: string
  data: unknown
}

/** Generates message and tool-use ids unique within one server. */
export class IdSource {
  private n = 0
  next(prefix: 'msg' | 'toolu' | 'req'): string {
    return `${prefix}_loopback_${String(++this.n).padStart(6, '0')}`
  }
}

export function buildMessage(spec: ResponseSpec, options: { model: string; ids: IdSource; prompt: PromptUsage }): LoopbackMessage {
  const { prompt } = options
  const content: LoopbackMessage['content'] = []
  if (spec.text !== undefined) content.push({ type: 'text', text: spec.text })
  for (const block of spec.content ?? []) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text })
    else content.push({ type: 'tool_use', id: block.id ?? options.ids.next('toolu'), name: block.name, input: block.input })
  }
  const outputText = content.map((b) => (b.type === 'text' ? b.text : JSON.stringify(b.input))).join('')
  return {
    id: options.ids.next('msg'),
    type: 'message',
    role: 'assistant',
    model: spec.model ?? options.model,
    content,
    stop_reason: spec.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    // The honest accounting of the prompt, unless the scenario fixes a figure.
    usage: {
      input_tokens: spec.usage?.input_tokens ?? prompt.input_tokens,
      output_tokens: spec.usage?.output_tokens ?? Math.max(1, estimateTextTokens(outputText)),
      cache_creation_input_tokens: spec.usage?.cache_creation_input_tokens ?? prompt.cache_creation_input_tokens,
      cache_read_input_tokens: spec.usage?.cache_read_input_tokens ?? prompt.cache_read_input_tokens,
      cache_creation:
        spec.usage?.cache_creation_input_tokens !== undefined
          ? { ephemeral_5m_input_tokens: spec.usage.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 }
          : prompt.cache_creation,
    },
  }
}

/**
 * The event sequence the API streams for `message`: message_start, ping, per block
 * content_block_start / deltas / content_block_stop, message_delta, message_stop. Text comes
 * in word-sized deltas; tool input as JSON split across several input_json_delta events.
 */
export function messageEvents(message: LoopbackMessage): SseEvent[] {
  const { usage } = message
  const events: SseEvent[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
      },
    },
    { event: 'ping', data: { type: 'ping' } },
  ]
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } })
      for (const piece of textPieces(block.text)) {
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } })
      }
    } else {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } },
      })
      // The API opens every tool input with an empty delta.
      for (const piece of ['', ...jsonPieces(JSON.stringify(block.input))]) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
        })
      }
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
  })
  events.push(
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  )
  return events
}

export function encodeSse(e: SseEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`
}

/** About three words a delta; never an empty one. */
function textPieces(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : [])
  const out: string[] = []
  for (let i = 0; i < words.length; i += 3) out.push(words.slice(i, i + 3).join(''))
  return out
}

/** At most four pieces, cut at arbitrary points (also inside strings), as the API does. */
function jsonPieces(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / 4))
  const out: string[] = []
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size))
  return out
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
}

export function errorTypeFor(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
}

/** The API's error body: `{type: 'error', error: {type, message}, request_id}`. */
export function errorBody(spec: Pick<ErrorSpec, 'status' | 'type' | 'message'>, requestId: string): object {
  const type = spec.type ?? errorTypeFor(spec.status)
  return { type: 'error', error: { type, message: spec.message ?? `${type} (loopback scenario)` }, request_id: requestId }
}
