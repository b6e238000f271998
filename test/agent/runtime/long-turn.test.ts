import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_ITERATIONS } from '../../../src/agent/start.js'
import { readMemberState } from '../../../src/store/member-state.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { TEAM, makeFixture, leadStructured, modelRequests, startAgent, type Fixture } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

/* A long refactor is one turn of many model calls: nothing stops it but its end (issue 25). */

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }]), onReady: (t) => ({ loopback, fx } = t) })

const CALLS = 120

describe('a long turn', () => {
  it(`works through ${CALLS} model calls in one turn without stopping, and reports the turn's real end`, async () => {
    expect(DEFAULT_MAX_ITERATIONS).toBe(Number.POSITIVE_INFINITY)
    const step = (i: number) => ({
      content: [
        { type: 'text' as const, text: `step ${i}` },
        { type: 'tool_use' as const, id: `toolu_glob_${i}`, name: 'Glob', input: { pattern: '*' } },
      ],
    })
    loopback.setScenario({
      agents: {
        alice: {
          steps: [
            { ...step(1), when: { lastUserIncludes: 'refactor everything' } },
            ...Array.from({ length: CALLS - 2 }, (_, i) => step(i + 2)),
            { text: `All ${CALLS} steps done.` },
          ],
        },
      },
    })
    const alice = await startAgent(fx, 'alice')
    await waitFor('alice idle', async () => (await readMemberState(TEAM, 'alice', fx.env))?.status === 'idle', 10_000, { output: alice.out })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'refactor everything', env: fx.env })
    await waitFor('the idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length > 0, 120_000, {
      output: alice.out,
    })
    const [note] = await leadStructured(fx, 'idle_notification', 'alice')
    expect(note).toMatchObject({ idleReason: 'available', summary: `All ${CALLS} steps done.` })
    const requests = modelRequests(loopback, 'alice')
    expect(requests).toHaveLength(CALLS)
    expect(requests.every((r) => r.status === 200)).toBe(true)
    expect((await readMemberState(TEAM, 'alice', fx.env))?.turns).toBe(CALLS)
  }, 180_000)
})
