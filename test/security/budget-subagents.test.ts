import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LEAD_NAME } from '../../src/home/paths.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readMemberState } from '../../src/store/member-state.js'
import { updateTeam } from '../../src/teams/team-store.js'
import { makeFixture, modelRequests, TEAM, type Fixture } from '../agent/runtime/helpers.js'
import { useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import { ALL_MODES } from './sandbox-helpers.js'
import { startLeadWithLayer } from './lead-with-layer.js'

/**
 * Issue 23 finding 8: with `--team-max-cost 0.005`, a subagent of the lead made 40 calls, all
 * served, and only the lead's own request reached a state.json the team budget sums. Now every
 * request a member causes — its subagents' and forks' included — is recorded in its state.json
 * and checked against the budgets before it is sent.
 */

const LIMIT = 0.05
const CALLS = 40
let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

function scenario(kind: 'subagent' | 'fork'): string {
  const child = kind === 'fork' ? `${LEAD_NAME}/fork-1` : `${LEAD_NAME}/general-purpose-1`
  const call =
    kind === 'fork' ? { description: 'read', prompt: 'read it' } : { description: 'read', prompt: 'read it', subagent_type: 'general-purpose' }
  const read = (n: number) => ({ content: [{ type: 'tool_use' as const, id: `toolu_${n}`, name: 'Read', input: { file_path: 'big.txt' } }] })
  loopback.setScenario({
    agents: {
      [LEAD_NAME]: [{ when: { lastUserIncludes: 'go' }, content: [{ type: 'tool_use', name: 'Agent', input: call }] }, { text: 'lead goes on' }],
      [child]: [...Array.from({ length: CALLS }, (_, i) => read(i)), { text: 'read it all' }],
    },
    fallback: { text: 'ok' },
  })
  return child
}

/**
 * Every mode and bwrap present and absent (the matrix): metering comes before any
 * permission or sandbox decision, so none of them may let a request through past the limit — a
 * Read denied (dontAsk) or asked is still a request that was metered.
 */
describe.each(ALL_MODES)("a team budget counts the lead's subagents and forks, and stops them before the request (%s)", (mode) => {
  for (const kind of ['subagent', 'fork'] as const)
    for (const bwrap of ['bwrap present', 'bwrap absent'] as const)
      it(`${kind}, ${bwrap}: its requests are recorded in team-lead's state.json, and it is stopped at the team's limit`, async () => {
        if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
        await fs.mkdir(path.join(fx.cwd, '.claude'), { recursive: true })
        await fs.writeFile(
          path.join(fx.cwd, '.claude', 'settings.json'),
          JSON.stringify({ sandbox: bwrap === 'bwrap absent' ? { bwrapPath: '/nonexistent/bwrap' } : {} }),
        )
        await fs.writeFile(path.join(fx.cwd, 'big.txt'), 'lorem ipsum dolor sit amet, consectetur\n'.repeat(250))
        await updateTeam(
          TEAM,
          (t) => {
            t.budget = { maxCostUsd: LIMIT }
          },
          fx.env,
        )
        const child = scenario(kind)
        const lead = await startLeadWithLayer(loopback, fx, mode)
        await waitFor('the budget stop', () => lead.runtime.guards.exhausted, 30_000)
        // Nothing more is asked for once the limit is reached.
        const served = modelRequests(loopback, child).length
        await new Promise((r) => setTimeout(r, 500))
        expect(modelRequests(loopback, child)).toHaveLength(served)
        expect(served).toBeGreaterThan(0)
        expect(served).toBeLessThan(CALLS)
        expect(lead.runtime.guards.exhausted).toMatch(/^budget_exhausted: team-lead spent \$[\d.]+ of \$0\.0500 \(the team's budget\)$/)
        expect(modelRequests(loopback, LEAD_NAME).some((r) => JSON.stringify(r.body).includes('read it all'))).toBe(false)
        // What the team budget sums holds the subagent's spend: at the limit, reached by its requests.
        const state = await waitFor('the recorded spend', async () => {
          const s = await readMemberState(TEAM, LEAD_NAME, fx.env)
          return (s?.costUsd ?? 0) >= LIMIT ? s : undefined
        })
        expect(state!.turns).toBe(served + modelRequests(loopback, LEAD_NAME).length)
      }, 60_000)
})
