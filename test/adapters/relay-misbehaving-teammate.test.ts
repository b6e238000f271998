import net from 'node:net'
import { PassThrough, Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { runRelayClient } from '../../src/adapters/relay-client.js'
import { readEndpoint } from '../../src/adapters/relay-frames.js'
import type { Relay } from '../../src/adapters/relay-server.js'
import { inboxPath } from '../../src/home/paths.js'
import { withInboxLock } from '../../src/mailbox/inbox-lock.js'
import type { IsolatedHome } from '../support/home.js'
import { startRelayWorld, stopRelayWorld } from '../support/relay.js'

/**
 * Attacks on the relay from a client that has the token (the teammate itself, misbehaving): frames
 * after its stdin ended must not crash the wrapper that serves it, a hook payload is not read without
 * bound (96 MiB here); and its hooks are never queued
 * behind `swarm send` children that wait.
 */
let h: IsolatedHome
let relay: Relay
let endpoint: string

beforeEach(async () => {
  ;({ h, relay, endpoint } = await startRelayWorld('swarm-relay-adv3-'))
})
afterEach(() => stopRelayWorld({ h, relay }))

/** Sends `frames` (one JSON each line) after the open frame; resolves with all the relay wrote once it closes. */
async function raw(argv: string[], frames: unknown[]): Promise<string> {
  const ep = await readEndpoint(endpoint)
  if (!ep) throw new Error('no endpoint')
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: ep.port }, () => {
      const lines = [{ t: 'open', token: ep.token, argv, cwd: h.project }, ...frames].map((f) => `${JSON.stringify(f)}\n`)
      s.write(lines.join(''))
    })
    let got = ''
    s.on('data', (c) => {
      got += c.toString()
    })
    s.once('close', () => resolve(got))
    s.once('error', reject)
  })
}

const input = (text: string) => ({ t: 'in', d: Buffer.from(text).toString('base64') })

async function send(text: string): Promise<number> {
  const sink = new PassThrough().resume()
  return runRelayClient(endpoint, ['send', 't', 'team-lead', text], {
    stdin: Readable.from([]),
    stdout: sink,
    stderr: sink,
    cwd: h.project,
    env: h.env,
  })
}

describe('the relay against its own misbehaving teammate', () => {
  it('stdin frames after its eof neither crash it nor stop it serving', async () => {
    const crashes: unknown[] = []
    const onCrash = (err: unknown) => crashes.push(err)
    process.on('uncaughtException', onCrash)
    try {
      const after = Array.from({ length: 20 }, () => input('more after the end\n'))
      await raw(['hook', 'session-start'], [input('{}'), { t: 'eof' }, ...after])
      await raw(['send', 't', 'team-lead', 'via raw'], [{ t: 'eof' }, ...after])
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(crashes.map(String)).toEqual([])
      expect(await send('still served')).toBe(0)
    } finally {
      process.off('uncaughtException', onCrash)
    }
  })

  it('a hook payload past its limit is refused, not buffered without end', async () => {
    const mb = Buffer.alloc(4 * 1024 * 1024, 0x61).toString('base64')
    const got = await raw(['hook', 'session-start'], [...Array.from({ length: 24 }, () => ({ t: 'in', d: mb })), { t: 'eof' }])
    expect(got).toContain('"t":"exit","code":2')
    expect(Buffer.from(JSON.parse(got.split('\n')[0]).d, 'base64').toString()).toMatch(/hook payload .*too large/)
    expect(await send('still served')).toBe(0)
  }, 60_000)

  it('a hook gets through while every swarm child slot is taken and more sends wait', async () => {
    await withInboxLock(inboxPath('t', 'team-lead', h.env), async () => {
      // Each send holds a child slot, waiting for the lead's inbox lock; the fifth and sixth wait for a slot.
      const sends = Array.from({ length: 6 }, (_, i) => send(`blocked ${i}`))
      await new Promise((resolve) => setTimeout(resolve, 500))
      const hook = await raw(['hook', 'pre-tool'], [input(JSON.stringify({ tool_name: 'read_file', tool_input: {} })), { t: 'eof' }])
      expect(hook).toContain('"t":"exit"')
      expect((await readMemberState('t', 'gem', h.env))?.status).toBe('working')
      void sends
    })
  })
})
