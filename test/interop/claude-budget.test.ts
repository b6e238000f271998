import { afterAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type ClaudeSandbox, claudeSandbox, requestsMentioning } from './claude-harness.js'

/**
 * A real Claude Code teammate is stopped by its budget (issue 23, finding 8): its requests go
 * through swarm's metering proxy, are counted in its state.json, and once `--max-cost` is spent the
 * next one is refused in the Messages API's error shape — the model never sees it.
 */
describe('Claude Code as a swarm teammate with a budget', () => {
  let sb: ClaudeSandbox
  const TEAM = 'crew'
  afterAll(async () => {
    await sb?.close()
  })

  it('its turns are counted in state.json, and the one past --max-cost never reaches the model', async () => {
    // Every answer 100k input tokens at Sonnet prices ($0.30+): two requests exhaust $0.50.
    sb = await claudeSandbox({ rules: [], fallback: { text: 'ok.', usage: { input_tokens: 100_000, output_tokens: 100 } } })
    expect((await sb.swarm(['team', 'create', TEAM, '--no-start', '--cwd', sb.project])).code).toBe(0)
    const r = await sb.swarm(['spawn', TEAM, 'cc', '--agent', 'claude', '--backend', 'tmux', '--max-cost', '0.5', '--prompt', 'TURN-ONE'], {
      timeout: 60_000,
    })
    expect(r.code, r.stderr).toBe(0)
    const file = sb.teamFile(TEAM, 'agents', 'cc', 'state.json')
    const state = () => sb.readJson<{ detail?: string; costUsd?: number; usage?: { inputTokens: number } }>(file)
    await waitFor('its first turn counted', () => (state()?.costUsd ?? 0) > 0, 60_000)
    // Its turns until the budget is spent (Claude Code's side requests count too: how many varies).
    for (let k = 2; (state()?.costUsd ?? 0) < 0.5 && k < 6; k++) {
      expect((await sb.swarm(['send', TEAM, 'cc', `TURN-${k}`])).code).toBe(0)
      await waitFor(`turn ${k} at the model`, () => requestsMentioning(sb.loopback, `TURN-${k}`).length > 0, 60_000)
      await waitFor(`turn ${k} counted`, () => (state()?.costUsd ?? 0) > 0.3 * (k - 1), 60_000)
    }
    expect(state()?.costUsd ?? 0).toBeGreaterThanOrEqual(0.5)
    expect((await sb.swarm(['send', TEAM, 'cc', 'TURN-LAST'])).code).toBe(0)
    await waitFor('the refusal in its record', () => state()?.detail?.includes('budget_exhausted: cc spent'), 60_000)
    expect(requestsMentioning(sb.loopback, 'TURN-LAST')).toEqual([])
    // What it spent is what the loopback API reported for Claude Code's requests (a request may still be
    // finishing; the SDK's requests of swarm's own processes are not the teammate's).
    const reported = () =>
      sb.loopback.requests.filter((q) => q.headers['user-agent']?.startsWith('claude-cli/')).reduce((n, q) => n + (q.usage?.input_tokens ?? 0), 0)
    await waitFor('its spend to match what the API reported', () => state()?.usage?.inputTokens === reported(), 15_000)
  }, 240_000)
})
