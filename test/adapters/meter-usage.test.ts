import { describe, expect, it } from 'vitest'
import { usageReader } from '../../src/adapters/meter-usage.js'

/** What the metering proxy reads off each API's answer, fed in arbitrary pieces as a socket would. */
function read(sse: boolean, body: string, piece = 7) {
  const r = usageReader(sse, undefined)
  for (let i = 0; i < body.length; i += piece) r.feed(Buffer.from(body.slice(i, i + piece)))
  return r.end()
}

const sse = (events: unknown[]) => events.map((e) => `event: x\r\ndata: ${JSON.stringify(e)}\r\n\r\n`).join('')

describe('the usage of a model answer', () => {
  it('Anthropic stream: input from message_start, the cumulative rest from message_delta', () => {
    const body = sse([
      {
        type: 'message_start',
        message: {
          model: 'claude-opus-4-5',
          usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 90, cache_creation_input_tokens: 5 },
        },
      },
      { type: 'content_block_delta', delta: { text: 'usage: {"input_tokens": 999}' } },
      { type: 'message_delta', usage: { output_tokens: 42 } },
    ])
    expect(read(true, body)).toEqual({
      model: 'claude-opus-4-5',
      usage: { inputTokens: 10, outputTokens: 42, cacheReadTokens: 90, cacheWriteTokens: 5 },
    })
  })

  it('Anthropic JSON, with 1 h cache writes', () => {
    const body = JSON.stringify({
      type: 'message',
      model: 'm',
      usage: { input_tokens: 3, output_tokens: 4, cache_creation_input_tokens: 8, cache_creation: { ephemeral_1h_input_tokens: 6 } },
    })
    expect(read(false, body)?.usage).toEqual({ inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 8, cacheWrite1hTokens: 6 })
  })

  it('Responses API stream: response.completed, cached tokens out of the input', () => {
    const body = sse([
      { type: 'response.created', response: { model: 'gpt-5', usage: null } },
      {
        type: 'response.completed',
        response: { model: 'gpt-5', usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 60 }, output_tokens: 7 } },
      },
    ])
    expect(read(true, body)).toEqual({ model: 'gpt-5', usage: { inputTokens: 40, outputTokens: 7, cacheReadTokens: 60, cacheWriteTokens: 0 } })
  })

  it('Chat Completions: a final chunk with usage, then [DONE]', () => {
    const body = `${sse([
      { model: 'gpt-4o', choices: [{ delta: { content: 'hi' } }] },
      { model: 'gpt-4o', choices: [], usage: { prompt_tokens: 50, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 20 } } },
    ])}data: [DONE]\n\n`
    expect(read(true, body)).toEqual({ model: 'gpt-4o', usage: { inputTokens: 30, outputTokens: 5, cacheReadTokens: 20, cacheWriteTokens: 0 } })
  })

  it('an error page or a stream without usage reports none', () => {
    expect(read(false, '<html>bad gateway</html>')).toBeUndefined()
    expect(read(true, sse([{ type: 'ping' }]))).toBeUndefined()
  })
})
