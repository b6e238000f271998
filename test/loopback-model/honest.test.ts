import { afterEach, describe, expect, it } from 'vitest'
import Anthropic, { APIError } from '@anthropic-ai/sdk'
import { PromptCache, breakpointProblem, minCacheableTokens } from '../../src/loopback-model/cache.js'
import { estimatePromptTokens, promptBlocks } from '../../src/loopback-model/tokens.js'
import { contextWindowFor, parsePromptTooLong } from '../../src/loopback-model/window.js'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'

let server: LoopbackServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

let clock = 1_000_000
async function start(scenario: ScenarioInput, contextWindow?: number): Promise<Anthropic> {
  server = await startLoopbackServer({ scenario, now: () => clock, ...(contextWindow ? { contextWindow } : {}) })
  return new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 })
}

const ephemeral = { type: 'ephemeral' as const }
/** About `tokens` tokens of text (4 characters a token). */
const filler = (tokens: number, seed = 'x') => seed.repeat(tokens * 4)
const SONNET = 'claude-sonnet-4-6'

function request(system: string, turns: string[], opts: { model?: string; ttl?: '1h' } = {}): Anthropic.MessageCreateParamsNonStreaming {
  const marker = opts.ttl ? { ...ephemeral, ttl: opts.ttl } : ephemeral
  const messages: Anthropic.MessageParam[] = turns.map((text, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: [{ type: 'text', text, ...(i === turns.length - 1 ? { cache_control: marker } : {}) }],
  }))
  return { model: opts.model ?? SONNET, max_tokens: 100, system: [{ type: 'text', text: system, cache_control: marker }], messages }
}

describe('token estimate', () => {
  it('is ceil(characters of each block without cache_control / 4), in tools → system → messages order', () => {
    const body = {
      tools: [{ name: 'Read', description: 'reads', input_schema: { type: 'object' } }],
      system: [{ type: 'text', text: 'abc', cache_control: ephemeral }],
      messages: [{ role: 'user', content: 'hello' }],
    }
    const blocks = promptBlocks(body)
    expect(blocks.map((b) => b.path)).toEqual(['tools.0', 'system.0', 'messages.0.content.0'])
    expect(blocks[1]).toMatchObject({ key: '{"type":"text","text":"abc"}', tokens: 7, breakpoint: '5m' })
    expect(blocks[2]).toMatchObject({ key: 'user:{"type":"text","text":"hello"}', tokens: 9 })
    expect(estimatePromptTokens(body)).toBe(blocks.reduce((s, b) => s + b.tokens, 0))
  })

  it('gives a 200k window by default and 1M to [1m] names', () => {
    expect(contextWindowFor('claude-sonnet-4-6')).toBe(200_000)
    expect(contextWindowFor('claude-sonnet-4-6[1m]')).toBe(1_000_000)
    expect(contextWindowFor('anything', 5000)).toBe(5000)
  })
})

describe('prompt cache rules', () => {
  it('writes at a breakpoint, reads the exact prefix next time, and lets new blocks be written', () => {
    const cache = new PromptCache(() => clock)
    const first = promptBlocks(request(filler(2000), ['question one']))
    const total1 = first.reduce((s, b) => s + b.tokens, 0)
    expect(cache.account(SONNET, first)).toEqual({
      input_tokens: 0,
      cache_creation_input_tokens: total1,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: total1, ephemeral_1h_input_tokens: 0 },
    })
    const second = promptBlocks(request(filler(2000), ['question one', 'answer', 'question two']))
    const u = cache.account(SONNET, second)
    expect(u.cache_read_input_tokens).toBe(total1)
    expect(u.cache_creation_input_tokens).toBe(second.reduce((s, b) => s + b.tokens, 0) - total1)
    expect(u.input_tokens).toBe(0)
  })

  it('a changed byte anywhere in the prefix is a miss from that block on', () => {
    const cache = new PromptCache(() => clock)
    cache.account(SONNET, promptBlocks(request(filler(2000), ['q'])))
    const changed = cache.account(SONNET, promptBlocks(request(filler(2000, 'y'), ['q'])))
    expect(changed.cache_read_input_tokens).toBe(0)
    // other model, other cache
    expect(cache.account('claude-opus-4-7', promptBlocks(request(filler(2000), ['q']))).cache_read_input_tokens).toBe(0)
  })

  it('does not cache a prefix below the minimum: 1,024 for Sonnet/Opus, 2,048 for Haiku', () => {
    expect(minCacheableTokens('claude-opus-4-7')).toBe(1024)
    expect(minCacheableTokens('claude-haiku-4-5')).toBe(2048)
    const cache = new PromptCache(() => clock)
    const small = promptBlocks(request(filler(1000), ['q']))
    expect(cache.account(SONNET, small).cache_creation_input_tokens).toBe(0)
    expect(cache.account(SONNET, small).cache_read_input_tokens).toBe(0)
    const mid = promptBlocks(request(filler(1500), ['q']))
    expect(cache.account('claude-haiku-4-5', mid)).toMatchObject({ cache_creation_input_tokens: 0 })
    expect(cache.account(SONNET, mid).cache_creation_input_tokens).toBeGreaterThan(1500)
  })

  it('expires an entry 5 minutes after its last use, refreshing it on each hit; 1h lives an hour', () => {
    const cache = new PromptCache(() => clock)
    const blocks = promptBlocks(request(filler(2000), ['q']))
    cache.account(SONNET, blocks)
    clock += 4 * 60_000
    expect(cache.account(SONNET, blocks).cache_read_input_tokens).toBeGreaterThan(0)
    clock += 4 * 60_000 // 8 minutes after the write, 4 after the hit
    expect(cache.account(SONNET, blocks).cache_read_input_tokens).toBeGreaterThan(0)
    clock += 5 * 60_000 + 1
    expect(cache.account(SONNET, blocks).cache_read_input_tokens).toBe(0)

    const long = promptBlocks(request(filler(2000, 'h'), ['q'], { ttl: '1h' }))
    expect(cache.account(SONNET, long).cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(2000)
    clock += 59 * 60_000
    expect(cache.account(SONNET, long).cache_read_input_tokens).toBeGreaterThan(2000)
  })

  it('looks back at most 20 blocks before a breakpoint for an earlier entry', () => {
    const cache = new PromptCache(() => clock)
    const base = request(filler(2000), ['q'])
    cache.account(SONNET, promptBlocks(base))
    const grow = (n: number) => {
      const extra: Anthropic.MessageParam[] = []
      for (let i = 0; i < n; i++) extra.push({ role: i % 2 === 0 ? 'assistant' : 'user', content: `m${i}` })
      const messages = [{ role: 'user' as const, content: 'q' }, ...extra]
      const last = messages[messages.length - 1]!
      messages[messages.length - 1] = { ...last, content: [{ type: 'text', text: last.content as string, cache_control: ephemeral }] }
      return promptBlocks({ ...base, messages })
    }
    // The entry at the user's `q` block (index 1) is read from 20 blocks later, not from 21; the
    // system block's own breakpoint still reads the system entry.
    const [system, q] = promptBlocks(base)
    expect(cache.account(SONNET, grow(20)).cache_read_input_tokens).toBe(system!.tokens + q!.tokens)
    const far = new PromptCache(() => clock)
    far.account(SONNET, promptBlocks(base))
    expect(far.account(SONNET, grow(21)).cache_read_input_tokens).toBe(system!.tokens)
  })

  it('refuses a fifth breakpoint and a 1h breakpoint after a 5m one, in the API’s words', () => {
    const five = promptBlocks({ system: [1, 2, 3, 4, 5].map((n) => ({ type: 'text', text: `s${n}`, cache_control: ephemeral })), messages: [] })
    expect(breakpointProblem(five)).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.')
    const order = promptBlocks({
      system: [{ type: 'text', text: 's', cache_control: ephemeral }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'u', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
    })
    expect(breakpointProblem(order)).toMatch(
      /^messages\.0\.content\.0\.cache_control\.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block\./,
    )
  })
})

describe('the loopback server is honest', () => {
  it('reports cache writes then reads to the real SDK, streaming too', async () => {
    const client = await start({ steps: [{ text: 'one' }, { text: 'two' }] })
    const first = await client.messages.create(request(filler(3000), ['hello']))
    expect(first.usage).toMatchObject({ cache_read_input_tokens: 0, input_tokens: 0 })
    expect(first.usage.cache_creation_input_tokens).toBe(server!.requests[0]!.promptTokens)
    const second = await client.messages.stream(request(filler(3000), ['hello', 'one', 'again'])).finalMessage()
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens)
    expect(second.usage.cache_read_input_tokens! + second.usage.cache_creation_input_tokens! + second.usage.input_tokens).toBe(
      server!.requests[1]!.promptTokens,
    )
  })

  it('without cache_control every token is plain input', async () => {
    const client = await start({ steps: [{ text: 'one' }] })
    const m = await client.messages.create({ model: SONNET, max_tokens: 10, system: filler(3000), messages: [{ role: 'user', content: 'hi' }] })
    expect(m.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0, input_tokens: server!.requests[0]!.promptTokens })
  })

  it('answers a prompt above the window with 400 "prompt is too long: N tokens > M maximum"', async () => {
    const client = await start({ steps: [{ text: 'never played' }, { text: 'fits' }] })
    const big = { model: SONNET, max_tokens: 10, messages: [{ role: 'user' as const, content: filler(200_001) }] }
    const err = await client.messages.create(big).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(APIError)
    const api = err as APIError
    const tokens = server!.requests[0]!.promptTokens!
    expect(api.status).toBe(400)
    expect(api.error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > 200000 maximum` },
    })
    expect(parsePromptTooLong(api.message)).toEqual({ tokens, maximum: 200_000 })
    // The refusal plays no scenario step, and the 1M variant takes the same prompt.
    const ok = await client.messages.create({ ...big, model: `${SONNET}[1m]` })
    expect(ok.content).toEqual([{ type: 'text', text: 'never played' }])
  })

  it('uses the scenario’s contextWindow, refuses 5 breakpoints, and counts tokens the same way', async () => {
    const client = await start({ contextWindow: 500, steps: [{ text: 'ok' }] })
    const err = (await client.messages
      .create({ model: SONNET, max_tokens: 10, messages: [{ role: 'user', content: filler(600) }] })
      .catch((e: unknown) => e)) as APIError
    expect(err.status).toBe(400)
    expect(err.message).toContain('> 500 maximum')
    const five = {
      model: SONNET,
      max_tokens: 10,
      system: [1, 2, 3, 4, 5].map((n) => ({ type: 'text' as const, text: `s${n}`, cache_control: ephemeral })),
      messages: [{ role: 'user' as const, content: 'hi' }],
    }
    const refused = (await client.messages.create(five).catch((e: unknown) => e)) as APIError
    expect(refused.status).toBe(400)
    expect(refused.message).toContain('A maximum of 4 blocks with cache_control may be provided. Found 5.')
    const { system: _s, ...plain } = five
    const counted = await client.messages.countTokens(plain)
    expect(counted.input_tokens).toBe(estimatePromptTokens(plain))
  })
})
