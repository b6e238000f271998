import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Courier } from '../../src/adapters/courier.js'
import { runHook, setStatus } from '../../src/adapters/hook.js'
import { OpencodeApi } from '../../src/adapters/opencode-api.js'
import { OpencodeBridge } from '../../src/adapters/opencode-bridge.js'
import { opencodeAdapter } from '../../src/adapters/opencode.js'
import { paneIo } from '../../src/backends/registry.js'
import { type AgentTeam, agentState, agentTeam, hookLog, inboxOf } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'

/**
 * opencode's TUI server as the bridge and the courier use it, over real HTTP and SSE: a prompt box
 * (append / clear / submit), the session's events and messages, permission requests and replies.
 * `dropFirstSubmit` loses the first submit (the text stays in the box), as a TUI busy redrawing
 * might; `lateEventsMs` holds a turn's events back that long (a loaded machine).
 */
async function fakeOpencode(opts: { dropFirstSubmit?: boolean; lateEventsMs?: number } = {}) {
  const clients = new Set<http.ServerResponse>()
  const submitted: string[] = []
  const replies: Array<{ id: string; body: unknown }> = []
  let box = ''
  let submits = 0
  let seq = 0
  const emit = (type: string, properties: Record<string, unknown>) => {
    for (const c of clients) c.write(`data: ${JSON.stringify({ id: `evt_${++seq}`, type, properties })}\n\n`)
  }
  const turn = (text: string) => {
    const user = `msg_u${++seq}`
    const assistant = `msg_a${++seq}`
    const sessionID = 'ses_1'
    emit('message.updated', { sessionID, info: { id: user, role: 'user', sessionID } })
    emit('message.part.updated', { sessionID, part: { id: `prt_${++seq}`, messageID: user, sessionID, type: 'text', text } })
    emit('session.status', { sessionID, status: { type: 'busy' } })
    emit('message.updated', { sessionID, info: { id: assistant, role: 'assistant', sessionID } })
    emit('message.part.updated', {
      sessionID,
      part: { id: `prt_${++seq}`, messageID: assistant, sessionID, type: 'text', text: `read ${text.length}` },
    })
    setTimeout(() => emit('session.status', { sessionID, status: { type: 'idle' } }), 50)
  }
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (d: Buffer) => {
      raw += d.toString()
    })
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {}
      const ok = (v: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(v))
      }
      if (req.url === '/event') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(`data: ${JSON.stringify({ type: 'server.connected', properties: {} })}\n\n`)
        clients.add(res)
        res.on('close', () => clients.delete(res))
        return
      }
      if (req.url === '/session/status') return ok({})
      if (req.url === '/session') return ok(submitted.length ? [{ id: 'ses_1', time: { updated: Date.now() } }] : [])
      if (req.url === '/session/ses_1/message')
        return ok(submitted.map((text, k) => ({ info: { id: `m${k}`, role: 'user' }, parts: [{ type: 'text', text }] })))
      if (req.url === '/tui/append-prompt') {
        box += String(body.text)
        return ok(true)
      }
      if (req.url === '/tui/clear-prompt') {
        box = ''
        return ok(true)
      }
      if (req.url === '/tui/submit-prompt') {
        if (!(opts.dropFirstSubmit && submits++ === 0)) {
          const text = box
          submitted.push(text)
          setTimeout(() => turn(text), opts.lateEventsMs ?? 0)
          box = ''
        }
        return ok(true)
      }
      const reply = /^\/permission\/([^/]+)\/reply$/.exec(req.url ?? '')
      if (reply) {
        replies.push({ id: decodeURIComponent(reply[1]), body })
        emit('permission.replied', { sessionID: 'ses_1', requestID: reply[1], reply: body.reply })
        return ok(true)
      }
      res.writeHead(404)
      res.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    submitted,
    replies,
    emit,
    close: async () => {
      for (const c of clients) c.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

describe('opencode: the courier types over its HTTP API, its event stream runs the hooks', () => {
  let t: AgentTeam
  let fake: Awaited<ReturnType<typeof fakeOpencode>> | undefined
  let stop: (() => Promise<void>) | undefined
  afterEach(async () => {
    await stop?.()
    await fake?.close()
    await t?.cleanup()
  }, 30_000)

  async function start(opts: { dropFirstSubmit?: boolean; lateEventsMs?: number }) {
    t = await agentTeam()
    expect((await t.swarm(['team', 'create', 't', '--agents', 'oc', '--agent', 'oc:opencode', '--no-start'])).code).toBe(0)
    fake = await fakeOpencode(opts)
    await setStatus({ team: 't', name: 'oc', env: t.env }, 'starting', 'opencode') // as its pane wrapper does
    const api = new OpencodeApi(fake.url)
    const bridge = new OpencodeBridge({
      team: 't',
      name: 'oc',
      api,
      env: t.env,
      runHook: (h) => runHook({ ...h, team: 't', name: 'oc', agent: 'opencode', env: t.env }),
    })
    const courier = new Courier({
      team: 't',
      name: 'oc',
      adapter: opencodeAdapter,
      // Never typed into: delivery goes over HTTP.
      pane: paneIo('tmux', { paneId: '%0', socketPath: '/nonexistent' }, t.env),
      env: t.env,
      promptInArgv: false,
      promptBox: api,
      confirmMs: 1_000,
      onShutdown: async () => undefined,
    })
    bridge.start()
    courier.start()
    stop = async () => {
      await courier.close()
      await bridge.close()
    }
    return fake
  }

  for (const [how, opts] of [
    ['', {}],
    [' when the first submit is lost', { dropFirstSubmit: true }],
    [' when its events come later than the confirmation wait', { lateEventsMs: 2_500 }],
  ] as const) {
    it(`submits each message exactly once${how}; states from its events`, async () => {
      const f = await start(opts)
      const texts = ['/slash first\nsecond line', '@at ünï 😀', `long ${'x'.repeat(9000)} end`]
      for (const [k, text] of texts.entries()) {
        expect((await t.swarm(['send', 't', 'oc', text])).code).toBe(0)
        await waitFor('submitted', () => f.submitted.some((s) => s.includes(text)), 15_000)
        const turnOver = async () => (await hookLog(t, 'oc')).filter((e) => e.event === 'stop').length === k + 1
        await waitFor('its turn over', async () => (await turnOver()) && (await agentState(t, 'oc'))?.status === 'idle', 15_000)
      }
      for (const text of texts) expect(f.submitted.filter((s) => s === `[message from team-lead] ${text}`)).toHaveLength(1)
      expect(f.submitted).toHaveLength(texts.length)
      await waitFor('all read', async () => (await inboxOf(t, 'oc')).every((m) => (m as { read?: boolean }).read), 10_000)
      const events = (await hookLog(t, 'oc')).map((e) => e.event)
      expect(events[0]).toBe('session-start')
      expect(events.filter((e) => e === 'prompt-submit')).toHaveLength(texts.length)
      expect(events.filter((e) => e === 'stop')).toHaveLength(texts.length)
      const idles = (await inboxOf(t, 'team-lead')).filter((m) => m.from === 'oc' && m.text.includes('idle_notification'))
      expect(idles).toHaveLength(texts.length)
      expect(idles[0].text).toContain(`read ${texts[0].length + '[message from team-lead] '.length}`)
    }, 60_000)
  }

  it('bubbles permission.asked to swarm perms and answers with the decision; one answered in the pane is withdrawn', async () => {
    const f = await start({})
    const ask = (id: string, command: string) =>
      f.emit('permission.asked', { id, sessionID: 'ses_1', permission: 'bash', patterns: [command], metadata: { command }, always: [] })
    const pending = async () =>
      (JSON.parse((await t.swarm(['perms', 't', '--json'])).stdout) as { requests: Array<{ id: string; input: Record<string, unknown> }> }).requests
    await waitFor('connected', async () => (await hookLog(t, 'oc')).some((e) => e.event === 'session-start'), 10_000)

    ask('per_1', 'touch yes')
    // Its tool's own update right behind the request must not say `working` over `waiting`.
    f.emit('message.updated', { sessionID: 'ses_1', info: { id: 'msg_t', role: 'assistant', sessionID: 'ses_1' } })
    f.emit('message.part.updated', {
      sessionID: 'ses_1',
      part: {
        id: 'prt_t',
        messageID: 'msg_t',
        sessionID: 'ses_1',
        type: 'tool',
        tool: 'bash',
        state: { status: 'running', input: { command: 'touch yes' } },
      },
    })
    const first = await waitFor('request 1', async () => (await pending())[0], 10_000)
    await new Promise((r) => setTimeout(r, 300))
    expect(first.input).toEqual({ command: 'touch yes' })
    expect((await agentState(t, 'oc'))?.status).toBe('waiting')
    expect((await t.swarm(['perms', 'approve', 't', first.id])).code).toBe(0)
    await waitFor('reply 1', () => f.replies.length === 1, 10_000)
    expect(f.replies[0]).toEqual({ id: 'per_1', body: { reply: 'once' } })

    ask('per_2', 'touch no')
    const second = await waitFor('request 2', async () => (await pending())[0], 10_000)
    expect((await t.swarm(['perms', 'deny', 't', second.id, '--feedback', 'not that'])).code).toBe(0)
    await waitFor('reply 2', () => f.replies.length === 2, 10_000)
    expect(f.replies[1]).toEqual({ id: 'per_2', body: { reply: 'reject', message: 'not that' } })

    ask('per_3', 'touch pane')
    await waitFor('request 3', async () => (await pending())[0], 10_000)
    f.emit('permission.replied', { sessionID: 'ses_1', requestID: 'per_3', reply: 'once' })
    await waitFor('request 3 withdrawn', async () => (await pending()).length === 0, 10_000)
    await new Promise((r) => setTimeout(r, 300))
    expect(f.replies).toHaveLength(2)
  }, 60_000)
})
