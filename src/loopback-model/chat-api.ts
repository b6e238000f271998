/**
 * OpenAI Chat Completions as opencode and pi use it: POST /v1/chat/completions (`messages`,
 * `tools`), answered as `chat.completion.chunk` SSE lines ending in `data: [DONE]` (usage in the
 * last chunk), or one `chat.completion` when `stream` is false.
 */
import type { AgentReply, AgentTurnView } from './agent-script.js'
import { contentText } from './agent-script.js'

type Json = Record<string, unknown>

export function chatView(body: Json): AgentTurnView {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : []
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]).map((t) => String((t.function as Json | undefined)?.name ?? '')) : []
  const last = messages[messages.length - 1]
  if (last?.role === 'tool') return { toolResult: contentText(last.content), tools }
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')
  return { ...(lastUser && { lastUser: contentText(lastUser.content) }), tools }
}

export function chatChunks(reply: AgentReply, opts: { id: string; model: string; inputChars: number }): Json[] {
  const base = { id: `chatcmpl-${opts.id}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: opts.model }
  const chunks: Json[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }]
  if (reply.text) chunks.push({ ...base, choices: [{ index: 0, delta: { content: reply.text }, finish_reason: null }] })
  if ('tool' in reply) {
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, id: `call_${opts.id}`, type: 'function', function: { name: reply.tool, arguments: JSON.stringify(reply.args) } },
            ],
          },
          finish_reason: null,
        },
      ],
    })
  }
  const usage = { prompt_tokens: Math.ceil(opts.inputChars / 4), completion_tokens: 8, total_tokens: Math.ceil(opts.inputChars / 4) + 8 }
  chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool' in reply ? 'tool_calls' : 'stop' }], usage })
  return chunks
}

/** The non-streaming form of the same reply. */
export function chatCompletion(reply: AgentReply, opts: { id: string; model: string; inputChars: number }): Json {
  const toolCalls =
    'tool' in reply ? [{ id: `call_${opts.id}`, type: 'function', function: { name: reply.tool, arguments: JSON.stringify(reply.args) } }] : undefined
  return {
    id: `chatcmpl-${opts.id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: opts.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls && { tool_calls: toolCalls }) },
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: Math.ceil(opts.inputChars / 4), completion_tokens: 8, total_tokens: Math.ceil(opts.inputChars / 4) + 8 },
  }
}
