import { afterEach, describe, expect, it } from 'vitest'
import path from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { loadScenarioFile, parseScenario, ScenarioError, type ScenarioInput } from '../../src/loopback-model/scenario.js'

const fixtures = path.join(import.meta.dirname, 'fixtures')
let server: LoopbackServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
})

async function start(scenario: ScenarioInput): Promise<{ server: LoopbackServer; client: Anthropic }> {
  server = await startLoopbackServer({ scenario })
  return { server, client: new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 }) }
}

const ask = (text: string) => ({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user' as const, content: text }] })

describe('loopback server with the real SDK', () => {
  it('answers a non-streaming request with text and usage', async () => {
    const { client, server } = await start({
      model: 'claude-loopback-1',
      steps: [{ text: 'Hello there', usage: { input_tokens: 11, output_tokens: 2, cache_read_input_tokens: 7 } }],
    })
    const message = await client.messages.create(ask('hi'))
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-loopback-1',
      content: [{ type: 'text', text: 'Hello there' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 11, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 7 },
    })
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`)
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/messages',
      body: { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] },
      stream: false,
      status: 200,
      played: { script: '*', kind: 'step', index: 0 },
      clientClosed: false,
    })
    expect(server.requests[0]!.headers.authorization).toBe('Bearer test-key')
    expect(typeof server.requests[0]!.receivedAt).toBe('number')
  })

  it('streams text and tool_use exactly as the API does; finalMessage has the parsed input', async () => {
    const input = { file_path: '/tmp/some "quoted" file.txt', offset: 10, nested: { list: [1, 2, 3] } }
    const { client } = await start({
      steps: [
        {
          content: [
            { type: 'text', text: 'Let me look at that file for you now.' },
            { type: 'tool_use', id: 'toolu_x', name: 'Read', input },
          ],
          usage: { input_tokens: 50, output_tokens: 20, cache_creation_input_tokens: 40, cache_read_input_tokens: 5 },
        },
      ],
    })
    const stream = client.messages.stream({ ...ask('read it'), tools: [] })
    const events: string[] = []
    const jsonDeltas: string[] = []
    const texts: string[] = []
    stream.on('streamEvent', (e) => {
      events.push(e.type)
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') jsonDeltas.push(e.delta.partial_json)
    })
    stream.on('text', (t) => texts.push(t))
    const final = await stream.finalMessage()
    expect(final.content).toEqual([
      { type: 'text', text: 'Let me look at that file for you now.' },
      { type: 'tool_use', id: 'toolu_x', name: 'Read', input },
    ])
    expect(final.stop_reason).toBe('tool_use')
    expect(final.usage).toMatchObject({ input_tokens: 50, output_tokens: 20, cache_creation_input_tokens: 40, cache_read_input_tokens: 5 })
    expect(texts.length).toBeGreaterThan(1)
    expect(jsonDeltas.filter((d) => d !== '').length).toBeGreaterThan(1)
    expect(jsonDeltas.join('')).toBe(JSON.stringify(input))
    expect(events[0]).toBe('message_start')
    expect(events.slice(-2)).toEqual(['message_delta', 'message_stop'])
    expect(events.filter((e) => e === 'content_block_start')).toHaveLength(2)
    expect(events.filter((e) => e === 'content_block_stop')).toHaveLength(2)
  })

  it('sends ping events and SSE framing on the wire', async () => {
    const { server } = await start({ steps: [{ text: 'hi' }] })
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask('x'), stream: true }),
    })
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const text = await res.text()
    expect(text).toMatch(/^event: message_start\ndata: \{.*\}\n\nevent: ping\ndata: \{"type":"ping"\}\n\n/)
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true)
  })

  it('answers 429 with retry-after and request-id; the SDK retries and then succeeds', async () => {
    server = await startLoopbackServer({
      scenario: { steps: [{ error: { status: 429, retryAfter: 0.01 } }, { text: 'after retry' }] },
    })
    const client = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 2 })
    const message = await client.messages.create(ask('x'))
    expect(message.content).toEqual([{ type: 'text', text: 'after retry' }])
    expect(server.requests.map((r) => r.status)).toEqual([429, 200])
  })

  it('gives the error JSON shape, type and request id to the SDK when retries run out', async () => {
    const { client, server } = await start({ steps: [{ error: { status: 529, message: 'Overloaded' } }] })
    const err = await client.messages.create(ask('x')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    const apiError = err as InstanceType<typeof Anthropic.APIError>
    expect(apiError.status).toBe(529)
    expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
    expect(apiError.requestID).toBe(server.requests[0]!.requestId)
  })

  it('delivers a mid-stream error event to the SDK stream', async () => {
    const { client } = await start({ steps: [{ error: { status: 529, midStream: true, message: 'overloaded mid-stream' } }] })
    const err = await client.messages
      .stream(ask('x'))
      .finalMessage()
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    expect((err as Error).message).toMatch(/overloaded mid-stream/)
  })

  it('accepts Authorization: Bearer (authToken) and x-api-key; rejects a missing key with 401', async () => {
    const { server } = await start({ steps: [{ text: 'a', when: {} }, { text: 'b' }] })
    const bearer = new Anthropic({ authToken: 'tok', apiKey: null, baseURL: server.url, maxRetries: 0 })
    expect((await bearer.messages.create(ask('x'))).content).toEqual([{ type: 'text', text: 'a' }])
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify(ask('x')),
    })
    expect(res.status).toBe(200)
    const missing = await fetch(`${server.url}/v1/messages`, { method: 'POST', body: JSON.stringify(ask('x')) })
    expect(missing.status).toBe(401)
    expect(missing.headers.get('request-id')).toMatch(/^req_/)
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
  })

  it('rejects malformed requests like the API', async () => {
    const { server } = await start({ steps: [] })
    const post = (pathName: string, body: string) => fetch(`${server.url}${pathName}`, { method: 'POST', headers: { 'x-api-key': 'k' }, body })
    const bad = await post('/v1/messages', '{not json')
    expect(bad.status).toBe(400)
    expect((await post('/v1/messages', JSON.stringify({ model: 'm', messages: [] }))).status).toBe(400)
    expect((await post('/v1/other', '{}')).status).toBe(404)
    const count = await post('/v1/messages/count_tokens', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }))
    expect(await count.json()).toEqual({ input_tokens: expect.any(Number) })
  })

  it('fails loudly (400, not retried) when the script has no step left', async () => {
    const { client } = await start({ steps: [{ text: 'only one' }] })
    await client.messages.create(ask('x'))
    await expect(client.messages.create(ask('x'))).rejects.toThrow(/400 .*loopback scenario: the default script has no step left \(it had 1\)/)
  })

  it('stops streaming when the client aborts, and records it', async () => {
    const { client, server } = await start({ steps: [{ text: 'one two three four five six seven eight nine ten', chunkDelayMs: 50 }] })
    const stream = client.messages.stream(ask('x'))
    stream.on('text', () => stream.abort())
    await stream.done().catch(() => undefined)
    await expect.poll(() => server.requests[0]?.clientClosed).toBe(true)
  })

  it('lets a request wait (delayMs) so a client can abort it in flight', async () => {
    const { client, server } = await start({ steps: [{ text: 'late', delayMs: 5_000 }] })
    const controller = new AbortController()
    const pending = client.messages.create(ask('x'), { signal: controller.signal })
    await expect.poll(() => server.requests.length).toBe(1)
    controller.abort()
    await expect(pending).rejects.toThrow(Anthropic.APIUserAbortError)
    await expect.poll(() => server.requests[0]!.clientClosed).toBe(true)
    expect(server.requests[0]!.status).toBeUndefined()
  })

  it('restarts every script when the scenario is replaced', async () => {
    const { client, server } = await start({ steps: [{ text: 'first' }] })
    await client.messages.create(ask('x'))
    server.setScenario({ steps: [{ text: 'second' }] })
    expect((await client.messages.create(ask('x'))).content).toEqual([{ type: 'text', text: 'second' }])
  })

  it('calls onRequest for every request before answering it', async () => {
    const seen: string[] = []
    server = await startLoopbackServer({ scenario: { steps: [{ text: 'x' }] }, onRequest: (r) => seen.push(r.path) })
    const client = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 0 })
    await client.messages.create(ask('x'))
    expect(seen).toEqual(['/v1/messages'])
  })
})

describe('scenarios', () => {
  it('plays one script per agent on one server (by header or by system prompt), reacting to tool results', async () => {
    server = await startLoopbackServer({ scenarioFile: path.join(fixtures, 'team.yaml') })
    const client = new Anthropic({ apiKey: 'k', baseURL: server.url, maxRetries: 2 })
    const as = (agent: string) => ({ headers: { 'x-swarm-agent': agent } })
    const text = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('')

    const a1 = await client.messages.create(ask('start'), as('alice'))
    const b1 = await client.messages.create(ask('start'), as('bob'))
    const c1 = await client.messages.create(ask('start'), as('carol')) // 429 first, retried by the SDK
    const d1 = await client.messages.create(ask('who am I?'))
    const b2 = await client.messages.stream({ ...ask('again'), system: 'You are agent "bob" in team t.' }).finalMessage()
    const a2 = await client.messages.create(
      {
        ...ask(''),
        messages: [
          { role: 'user', content: 'start' },
          { role: 'assistant', content: a1.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_alice_1', content: 'hello world' }] },
        ],
      },
      as('alice'),
    )
    const c2 = await client.messages.create(ask('{"type":"shutdown_request"}'), as('carol'))

    expect(a1.content[1]).toEqual({ type: 'tool_use', id: 'toolu_alice_1', name: 'Read', input: { file_path: 'notes.txt' } })
    expect(a1.usage).toMatchObject({ cache_creation_input_tokens: 100 })
    expect(a1.model).toBe('claude-loopback-1')
    expect([text(b1), text(c1), text(d1), text(b2), text(a2), text(c2)]).toEqual([
      'Bob here.',
      'Carol after the rate limit.',
      'Default reply.',
      'Bob again.',
      'The notes say hello.',
      'Shutting down.',
    ])
    expect(server.requests.map((r) => [r.agent ?? '-', r.played?.kind, r.status])).toEqual([
      ['alice', 'step', 200],
      ['bob', 'step', 200],
      ['carol', 'step', 429],
      ['carol', 'step', 200],
      ['-', 'step', 200],
      ['bob', 'step', 200],
      ['alice', 'step', 200],
      ['carol', 'rule', 200],
    ])
  })

  it('lets a step wait for its condition, and rules fire a limited number of times', async () => {
    const { client } = await start({
      steps: [{ when: { lastUserMatches: '/^go$/i' }, text: 'going' }],
      rules: [{ when: { lastUserIncludes: 'ping' }, text: 'pong', times: 1 }],
      fallback: { text: 'waiting' },
    })
    const say = async (t: string) => ((await client.messages.create(ask(t))).content[0] as { text: string }).text
    expect(await say('ping')).toBe('pong')
    expect(await say('ping')).toBe('waiting')
    expect(await say('GO')).toBe('going')
    expect(await say('go')).toBe('waiting')
  })

  it('matches a rule on what the last tool returned, and fills {{match.N}} from it', async () => {
    const { client, server: s } = await start({
      rules: [
        {
          label: 'assign',
          when: { toolResultMatches: '^Created task #(\\d+)' },
          content: [{ type: 'tool_use', name: 'TaskUpdate', input: { taskId: '{{match.1}}' } }],
        },
        { label: 'said', when: { lastUserMatches: 'task (\\w+)', toolResultMatches: 'ignored (\\w+)' }, text: 'user said {{match.1}}' },
      ],
      fallback: { text: 'no match' },
    })
    const answerTo = (result: string, text?: string) =>
      client.messages.create({
        ...ask(''),
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'TaskCreate', input: {} }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: result }, ...(text ? [{ type: 'text' as const, text }] : [])],
          },
        ],
      })
    expect((await answerTo('Created task #42: Write hello.txt')).content[0]).toMatchObject({ type: 'tool_use', input: { taskId: '42' } })
    expect((await answerTo('Updated #42 [pending]')).content[0]).toEqual({ type: 'text', text: 'no match' })
    // Both given: the groups come from the user's text.
    expect((await answerTo('ignored result', 'about task seven')).content[0]).toEqual({ type: 'text', text: 'user said seven' })
    expect(s.requests.map((r) => r.played?.label ?? r.played?.kind)).toEqual(['assign', 'fallback', 'said'])
    // A pattern that cannot compile is refused when the file is read, not on the request it meets.
    expect(() => parseScenario({ rules: [{ when: { toolResultMatches: '(' }, text: 'x' }] })).toThrow(
      /rules\.0\.when\.toolResultMatches: not a valid regular expression/,
    )
    expect(() => parseScenario({ agentFromSystem: '[' })).toThrow(/agentFromSystem: not a valid regular expression/)
  })

  it('loads JSON scenario files and reports invalid scenarios with the field at fault', async () => {
    expect((await loadScenarioFile(path.join(fixtures, 'simple.json'))).steps).toEqual([{ text: 'from json' }])
    expect(() => parseScenario({ steps: [{ text: 'a', error: { status: 429 } }] })).toThrow(ScenarioError)
    expect(() => parseScenario({ steps: [{ text: 'a', error: { status: 429 } }] })).toThrow(/steps\.0: give either text\/content or error/)
    expect(() => parseScenario({ steps: [{ content: [{ type: 'tool_use', input: {} }] }] })).toThrow(/steps\.0\.content\.0\.name/)
    expect(() => parseScenario({ agents: { a: [{ txt: 'typo' }] } })).toThrow(/agents\.a/)
    await expect(loadScenarioFile(path.join(fixtures, 'missing.yaml'))).rejects.toThrow(/cannot read scenario file/)
  })
})
