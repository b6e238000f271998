import { describe, expect, it } from 'vitest'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readTeam } from '../../src/teams/team-store.js'
import { isAlive } from '../../src/process/liveness.js'
import { BIN, type Sandbox, useModelSandbox } from './helpers.js'
import { COORDINATOR_TOOLS } from '../agent/subagents/helpers.js'
import { waitFor } from '../support/wait.js'

describe('team create --coordinator', () => {
  let sb: Sandbox
  let server: LoopbackServer
  useModelSandbox(
    { agents: { 'team-lead': [{ when: { lastUserIncludes: 'hello' }, text: 'I only delegate.' }] }, fallback: { text: 'Noted.' } },
    (t) => ({ sb, server } = t),
  )

  it('is recorded in the team, and the leader started for it gives its lead only the delegation tools and the four phases', async () => {
    expect((await sb.swarm(['team', 'create', 'coord', '--no-start', '--coordinator', '--cwd', sb.project])).code).toBe(0)
    expect((await readTeam('coord', sb.env)).swarmCoordinator).toBe(true)
    const leader = sb.start(process.execPath, [BIN, 'leader', 'coord'])
    let seen = ''
    leader.stdout!.on('data', (d) => (seen += String(d)))
    await waitFor('the console', () => seen.includes('swarm leader — team coord'))
    leader.stdin!.write('hello lead\n')
    await waitFor('the lead’s answer', () => seen.includes('I only delegate.'))
    const body = server.requests.find((r) => r.agent === 'team-lead')!.body as { tools: Array<{ name: string }>; system: Array<{ text: string }> }
    expect(body.tools.map((t) => t.name).sort()).toEqual(COORDINATOR_TOOLS)
    expect(body.system.map((b) => b.text).join('\n')).toContain('You are a COORDINATOR')
    leader.stdin!.write('/quit\n')
    await waitFor('the leader gone', () => !isAlive(leader.pid!), 10_000)
  }, 40_000)
})
