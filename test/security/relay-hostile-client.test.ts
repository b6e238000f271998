import fs from 'node:fs/promises'
import net from 'node:net'
import { PassThrough, Readable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { agentHomeDir, inboxPath } from '../../src/home/paths.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { createTeam } from '../../src/teams/team-store.js'
import { relayEndpointFile } from '../../src/adapters/relay-frames.js'
import { runRelayClient } from '../../src/adapters/relay-client.js'
import { type Relay, startRelay } from '../../src/adapters/relay-server.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { requireBuilt } from '../support/repo.js'

/**
 * Adversarial review of the relay (real loopback TCP, the real swarm child): argv a hostile
 * teammate could try to act as someone else with, and what any local process without the token
 * (another teammate's sandbox shares the loopback) can make the wrapper hold.
 */
let h: IsolatedHome
let relay: Relay
let endpoint: string

beforeEach(async () => {
  requireBuilt('dist/cli/main.js')
  h = isolatedHome('swarm-adv-relay-')
  await createTeam(
    {
      name: 't',
      cwd: h.project,
      members: [
        { name: 'gem', agent: 'gemini', cwd: h.project },
        { name: 'bob', agent: 'gemini', cwd: h.project },
      ],
    },
    h.env,
  )
  endpoint = relayEndpointFile(agentHomeDir('t', 'gem', h.env))
  relay = await startRelay({ team: 't', name: 'gem', agent: 'gemini', endpointFile: endpoint, env: h.env, cwd: h.project })
})
afterEach(async () => {
  await relay?.close()
  await h?.cleanup()
})

async function client(argv: string[]): Promise<{ code: number; stderr: string }> {
  const err: Buffer[] = []
  const sink = () => new PassThrough()
  const stderr = sink()
  stderr.on('data', (c: Buffer) => err.push(c))
  const code = await runRelayClient(endpoint, argv, { stdin: Readable.from([]), stdout: sink(), stderr, cwd: h.project, env: h.env })
  return { code, stderr: Buffer.concat(err).toString('utf8') }
}

describe('adversarial: the relay', () => {
  it('refuses every argv form that names someone else', async () => {
    for (const argv of [
      ['tasks', 't', 'claim', '1', '--as=bob'],
      ['tasks', 't', 'claim', '1', '--as', 'gem', '--as', 'bob'],
      ['send', 't', 'bob', 'x', '--from', 'gem', '--from', 'team-lead'],
      ['send', 't', 'bob', 'x', '--from=team-lead'],
      ['tasks', 't', 'add', 'x', '--from', 'bob'],
      ['mcp', '--team', 't', '--name', 'bob'],
      ['hook', 'stop', '--team', 't', '--name=team-lead'],
      ['hook', 'permission-request', '--agent', 'claude'],
      ['send', 'ｔ', 'bob', 'x'],
      ['send', '--team', 'other', 't', 'bob', 'x'],
      ['relay', endpoint, '--', 'perms', 'approve', 't', 'x'],
    ]) {
      const r = await client(argv)
      expect(r.code, argv.join(' ')).toBe(2)
    }
    expect(await readInbox(inboxPath('t', 'bob', h.env))).toEqual([])
  })

  it('drops a connection that has not shown its token within a small first frame', async () => {
    const { port } = JSON.parse(await fs.readFile(endpoint, 'utf8')) as { port: number }
    // 1 MiB with no newline and no token: held in the wrapper's memory until 8 MiB, per connection, before this fix.
    const closed = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => s.write('x'.repeat(1024 * 1024)))
      s.on('data', () => undefined)
      s.once('close', () => resolve(true))
      s.once('error', () => resolve(true))
      setTimeout(() => {
        s.destroy()
        resolve(false)
      }, 15_000)
    })
    expect(closed).toBe(true)
  })
})
