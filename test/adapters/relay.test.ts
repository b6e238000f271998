import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { inboxPath } from '../../src/home/paths.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { withInboxLock } from '../../src/mailbox/inbox-lock.js'
import { runRelayClient, type RelayClientIo } from '../../src/adapters/relay-client.js'
import { foreignIdentity, type Relay, startRelay } from '../../src/adapters/relay-server.js'
import type { IsolatedHome } from '../support/home.js'
import { startRelayWorld, stopRelayWorld } from '../support/relay.js'

/**
 * The relay a sandboxed CLI teammate reaches its team through: real loopback TCP, the real swarm
 * child for `send`, the real hook and MCP code in-process — and everything it must refuse.
 */
let h: IsolatedHome
let relay: Relay
let endpoint: string
const leadInbox = () => readInbox(inboxPath('t', 'team-lead', h.env))

beforeEach(async () => {
  ;({ h, relay, endpoint } = await startRelayWorld('swarm-relay-'))
})
afterEach(() => stopRelayWorld({ h, relay }))

interface Ran {
  code: number
  stdout: string
  stderr: string
}

async function client(argv: string[], input?: string | Readable, file = endpoint): Promise<Ran> {
  const out: Buffer[] = []
  const err: Buffer[] = []
  const sink = (into: Buffer[]) => {
    const s = new PassThrough()
    s.on('data', (c: Buffer) => into.push(c))
    return s
  }
  const stdin = typeof input === 'string' || input === undefined ? Readable.from(input === undefined ? [] : [Buffer.from(input)]) : input
  const io: RelayClientIo = { stdin, stdout: sink(out), stderr: sink(err), cwd: h.project, env: h.env }
  const code = await runRelayClient(file, argv, io)
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }
}

const identity = ['--team', 't', '--name', 'gem', '--agent', 'gemini']

describe('the relay', () => {
  it('announces a port and a token only in the teammate home, mode 0600', async () => {
    const st = await fs.stat(endpoint)
    expect(st.mode & 0o777).toBe(0o600)
    const e = JSON.parse(await fs.readFile(endpoint, 'utf8'))
    expect(e.port).toBe(relay.port)
    expect(e.token.length).toBeGreaterThanOrEqual(16)
  })

  it('runs a hook as the teammate: its state is recorded', async () => {
    const r = await client(['hook', 'prompt-submit', ...identity], JSON.stringify({ prompt: 'hello', session_id: 's1' }))
    expect(r.code).toBe(0)
    expect((await readMemberState('t', 'gem', h.env))?.status).toBe('working')
  })

  it('runs swarm send as a child, as the teammate', async () => {
    const r = await client(['send', 't', 'team-lead', 'from the sandbox'])
    expect(r.code, r.stderr).toBe(0)
    const lead = await leadInbox()
    expect(lead.map((m) => [m.from, m.text])).toContainEqual(['gem', 'from the sandbox'])
  })

  it('serves swarm mcp over the connection', async () => {
    const input = new PassThrough()
    const done = client(['mcp', '--team', 't', '--name', 'gem'], input)
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`)
    input.end()
    const r = await done
    expect(r.code).toBe(0)
    const reply = JSON.parse(r.stdout.trim().split('\n')[0])
    expect(reply.result.tools.map((t: { name: string }) => t.name)).toEqual(['SendMessage', 'TaskList', 'TaskGet', 'TaskUpdate', 'TaskCreate'])
  })

  it('refuses other identities, other teams and commands a teammate may not run', async () => {
    for (const argv of [
      ['hook', 'stop', '--team', 't', '--name', 'team-lead', '--agent', 'gemini'],
      ['hook', 'stop', '--team=other', '--name', 'gem'],
      ['send', 'other', 'team-lead', 'x'],
      ['send', 't', 'team-lead', 'x', '--from', 'team-lead'],
      ['tasks', 't', 'claim', '1', '--as', 'bob'],
      ['perms', 'approve', 't', 'x'],
      ['team', 'delete', 't'],
    ]) {
      const r = await client(argv)
      expect(r.code, argv.join(' ')).toBe(2)
      expect(r.stderr, argv.join(' ')).toMatch(/^swarm: (a teammate acts only as itself|swarm \w+ is not available to a teammate)/)
    }
    expect(await leadInbox()).toEqual([])
  })

  it('refuses a connection without its token, and frames it cannot read', async () => {
    const e = JSON.parse(await fs.readFile(endpoint, 'utf8'))
    const forged = path.join(h.base, 'forged.json')
    await fs.writeFile(forged, JSON.stringify({ port: e.port, token: 'x'.repeat(32) }))
    const r = await client(['send', 't', 'team-lead', 'x'], undefined, forged)
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('without its token') })
    const garbage = await rawExchange(e.port, 'not json\n')
    expect(garbage).toContain('"exit","code":2')
    expect(await leadInbox()).toEqual([])
  })

  it('when it cannot be reached, a permission hook denies in the CLI form and other commands fail', async () => {
    await relay.close()
    const denied = await client(['hook', 'permission-request', ...identity], JSON.stringify({ tool_name: 'run_shell_command' }))
    expect(denied.code).toBe(0)
    expect(JSON.parse(denied.stdout)).toMatchObject({ decision: 'deny' })
    expect((await client(['hook', 'stop', ...identity])).code).toBe(1)
    const send = await client(['send', 't', 'team-lead', 'x'])
    expect(send.code).toBe(8)
    expect(send.stderr).toMatch(/^swarm: could not reach the team through the relay/)
  })

  it('a corrupt endpoint file is an error, never followed', async () => {
    await fs.writeFile(endpoint, '{"port": "no"}')
    const r = await client(['send', 't', 'team-lead', 'x'])
    expect(r.code).toBe(8)
    expect(r.stderr).toContain('corrupt file')
  })
})

describe('what the relay spends', () => {
  const limited = async (limits: Parameters<typeof startRelay>[0]['limits']) => {
    await relay.close()
    relay = await startRelay({ team: 't', name: 'gem', agent: 'gemini', endpointFile: endpoint, env: h.env, cwd: h.project, limits })
    return relay
  }

  it('closes a connection that does not show its token in time', async () => {
    const r = await limited({ openMs: 300 })
    const closed = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port: r.port })
      s.once('close', () => resolve(true))
      s.once('error', () => undefined)
    })
    expect(closed).toBe(true)
    expect((await client(['send', 't', 'team-lead', 'after'])).code).toBe(0) // the relay still serves
  })

  it('past its limit of connections without a token, the oldest is closed; a teammate still gets through', async () => {
    const r = await limited({ pending: 3 })
    const sockets: net.Socket[] = []
    const closedAt: number[] = []
    for (let i = 0; i < 5; i++) {
      const s = net.connect({ host: '127.0.0.1', port: r.port })
      s.once('close', () => closedAt.push(i))
      s.once('error', () => undefined)
      sockets.push(s)
      await new Promise((resolve) => s.once('connect', resolve))
    }
    const ok = await client(['send', 't', 'team-lead', 'through'])
    expect(ok.code, ok.stderr).toBe(0)
    // The legitimate client was pending too for a moment and pushed out one more; never a newer one first.
    expect(closedAt.slice(0, 2).sort()).toEqual([0, 1])
    expect(sockets[4].destroyed).toBe(false)
    for (const s of sockets) s.destroy()
  })

  it('runs at most its limit of swarm children at once; the next waits its turn', async () => {
    await limited({ children: 1 })
    const finished: string[] = []
    let blocked!: Promise<Ran>
    await withInboxLock(inboxPath('t', 'team-lead', h.env), async () => {
      blocked = client(['send', 't', 'team-lead', 'first']).then((r) => {
        finished.push('send')
        return r
      })
      await new Promise((resolve) => setTimeout(resolve, 300)) // the send has its slot and waits for the lock
      const list = client(['tasks', 't', 'list']).then((r) => {
        finished.push('tasks')
        return r
      })
      // Holding the lock until the list would long have finished without the limit.
      await Promise.race([list, new Promise((resolve) => setTimeout(resolve, 3_000))])
      expect(finished).toEqual([])
    })
    expect((await blocked).code).toBe(0)
    await expect.poll(() => finished, { timeout: 10_000 }).toEqual(['send', 'tasks'])
  })
})

describe('foreignIdentity', () => {
  const self = { team: 't', name: 'gem', agent: 'gemini' }
  it('names the first option naming someone else', () => {
    expect(foreignIdentity(['--team', 't', '--name', 'gem'], self)).toBeUndefined()
    expect(foreignIdentity(['--from=gem', '--agent', 'gemini'], self)).toBeUndefined()
    expect(foreignIdentity(['--name', 'bob'], self)).toBe('--name "bob" is not "gem"')
    expect(foreignIdentity(['--as'], self)).toBe('--as "" is not "gem"')
    expect(foreignIdentity(['--agent=codex'], self)).toBe('--agent "codex" is not "gemini"')
  })
})

function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write(text))
    let got = ''
    s.on('data', (c) => {
      got += c.toString()
    })
    s.once('close', () => resolve(got))
    s.once('error', reject)
  })
}
