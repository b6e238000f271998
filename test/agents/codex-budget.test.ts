import { afterAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam, cliSpawnArgs, hasCli } from './helpers.js'
import { readMemberState } from '../../src/store/member-state.js'
import { delay } from '../../src/process/delay.js'
import { waitFor } from '../support/wait.js'

/**
 * A real Codex teammate whose model would have it run commands for ever (every tool result asks
 * for another) is stopped by its budget (issue 23, finding 8): its requests go through swarm's
 * metering proxy, are counted in its state.json and refused once `--max-cost` is spent — Codex
 * shows the refusal and sends nothing more — and it never holds the provider key.
 */
const NAME = 'codex-mate'
const responses = (t: AgentTeam) => t.server.requests.filter((r) => r.api === 'responses' && !r.aux)

describe.skipIf(!hasCli('codex'))('a Codex teammate with a budget (real CLI)', () => {
  let t: AgentTeam
  afterAll(async () => {
    await t?.cleanup()
  }, 30_000)

  it('is refused past --max-cost, its spend in state.json, and sends nothing after', async () => {
    t = await agentTeam({
      rules: [
        { userMatches: 'LOOP', reply: { tool: 'exec_command', args: { cmd: 'echo again' } } },
        { afterTool: true, reply: { tool: 'exec_command', args: { cmd: 'echo again' } } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(cliSpawnArgs(NAME, 'codex', 'LOOP', ['--max-cost', '0.05']))
    expect(spawned.code, spawned.stderr).toBe(0)
    const state = await waitFor(
      'its budget to be exhausted',
      async () => {
        const s = await readMemberState('t', NAME, t.env).catch(() => undefined)
        return s?.detail?.includes('budget_exhausted') ? s : undefined
      },
      90_000,
    )
    expect(state.costUsd ?? 0).toBeGreaterThanOrEqual(0.05)
    const sent = responses(t).length
    // What each request cost is what the loopback server said it used: counted, and in the budget's terms.
    expect(sent).toBeGreaterThan(0)
    expect(sent).toBeLessThan(20)
    await delay(5_000)
    expect(responses(t).length).toBe(sent)
    // The real key reached the server; the CLI held a stand-in.
    expect(new Set(responses(t).map((r) => r.headers.authorization))).toEqual(new Set(['Bearer loopback-key']))
  }, 150_000)
})
