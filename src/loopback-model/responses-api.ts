/**
 * The OpenAI Responses API as Codex uses it: POST /v1/responses (`input` items, `tools`), answered
 * as an SSE stream — response.created, output_item.added / output_text.delta / output_item.done per
 * item, response.completed with usage — or one JSON response when `stream` is false.
 */
import type { AgentReply, AgentTurnView } from './agent-script.js'
import { contentText } from './agent-script.js'

type Json = Record<string, unknown>

export function responsesView(body: Json): AgentTurnView {
  const input = Array.isArray(body.input)
    ? (body.input as Json[])
    : typeof body.input === 'string'
      ? [{ type: 'message', role: 'user', content: body.input }]
      : []
  const last = input[input.length - 1]
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]).map((t) => String(t.name ?? t.type ?? '')) : []
  if (last && (last.type === 'function_call_output' || last.type === 'custom_tool_call_output')) {
    const out = last.output
    return { toolResult: typeof out === 'string' ? out : contentText(out) || JSON.stringify(out), tools }
  }
  const lastUser = [...input].reverse().find((i) => i.role === 'user' && (i.type === 'message' || i.type === undefined))
  return { ...(lastUser && { lastUser: contentText(lastUser.content) }), tools }
}

export function responsesEvents(reply: AgentReply, opts: { id: string; model: string; inputChars: number }): Array<{ event: string; data: Json }> {
  const items: Json[] = []
  if (reply.text)
    items.push({
      type: 'message',
      id: `msg_${opts.id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    })
  if ('tool' in reply)
    items.push({
      type: 'function_call',
      id: `fc_${opts.id}`,
      call_id: `call_${opts.id}`,
      name: reply.tool,
      ...(reply.namespace && { namespace: reply.namespace }),
      arguments: JSON.stringify(reply.args),
      status: 'completed',
    })
  const usage = {
    input_tokens: Math.ceil(opts.inputChars / 4),
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 8,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: Math.ceil(opts.inputChars / 4) + 8,
  }
  const response = {
    id: `resp_${opts.id}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: opts.model,
    status: 'completed',
    output: items,
    usage,
  }
  const events: Array<{ event: string; data: Json }> = [
    { event: 'response.created', data: { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } } },
  ]
  items.forEach((item, index) => {
    events.push({
      event: 'response.output_item.added',
      data: {
        type: 'response.output_item.added',
        output_index: index,
        item: { ...item, status: 'in_progress', ...(item.type === 'message' && { content: [] }) },
      },
    })
    if (item.type === 'message')
      events.push({
        event: 'response.output_text.delta',
        data: { type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta: reply.text },
      })
    events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: index, item } })
  })
  events.push({ event: 'response.completed', data: { type: 'response.completed', response } })
  return events
}
