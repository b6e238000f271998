import { describe, expect, it } from 'vitest'
import { readArchive } from '../../src/mailbox/archive.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { inboxPath } from '../../src/home/paths.js'
import { readTeam } from '../../src/teams/team-store.js'
import { isAlive } from '../../src/process/liveness.js'
import { BIN, useModelSandbox, type Sandbox } from './helpers.js'
import { waitFor } from '../support/wait.js'

const SCENARIO = {
  agents: {
    'team-lead': [
      {
        when: { lastUserIncludes: 'get bob' },
        content: [
          { type: 'tool_use' as const, name: 'Agent', input: { description: 'greet the lead', prompt: 'Please say hi to the lead.', name: 'bob' } },
        ],
      },
      { text: 'Spawned bob.' },
    ],
    bob: [
      {
        when: { lastUserIncludes: 'say hi' },
        content: [{ type: 'tool_use' as const, name: 'SendMessage', input: { to: 'team-lead', message: 'hi lead, bob here', summary: 'hi' } }],
      },
      { text: 'Greeted.' },
    ],
  },
  fallback: { text: 'Noted.' },
}

describe('the lead agent at the leader console', () => {
  let sb: Sandbox
  let server: LoopbackServer
  useModelSandbox(SCENARIO, (t) => ({ sb, server } = t))

  it('spawns a teammate with the Agent tool from text typed at the console; the teammate reports back', async () => {
    expect((await sb.swarm(['team', 'create', 'boss', '--no-start', '--cwd', sb.project])).code).toBe(0)
    const leader = sb.start(process.execPath, [BIN, 'leader', 'boss'])
    let seen = ''
    leader.stdout!.on('data', (d) => (seen += String(d)))
    await waitFor('the console', () => seen.includes('swarm leader — team boss'))
    leader.stdin!.write('please get bob to say hi\n')
    await waitFor('bob in the roster', async () =>
      (await readTeam('boss', sb.env)).members.some((m) => m.name === 'bob' && m.backendType === 'in-process'),
    )
    const file = inboxPath('boss', 'team-lead', sb.env)
    await waitFor("bob's greeting", async () =>
      [...(await readArchive(file).catch(() => [])), ...(await readInbox(file))].some((m) => m.from === 'bob' && m.text.includes('hi lead')),
    )
    await waitFor('the greeting shown at the console', () => seen.includes('bob') && seen.includes('hi'))
    expect(server.requests.some((r) => r.agent === 'team-lead' && JSON.stringify(r.body).includes('please get bob to say hi'))).toBe(true)
    leader.stdin!.write('/quit\n')
    await waitFor('the leader gone', () => !isAlive(leader.pid!), 10_000)
  }, 40_000)
})
