import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { beforeEach, describe, expect, it } from 'vitest'
import { readMemberState } from '../../../src/store/member-state.js'
import { readTranscript, transcriptPath } from '../../../src/agent/transcript.js'
import { LEAD_NAME } from '../../../src/home/paths.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { readTeam, updateMember, updateTeam } from '../../../src/teams/team-store.js'
import { BIN, TEAM, inbox, makeFixture, leadStructured, modelRequests, startAgent, type Fixture } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice', maxTokens: 20_000 }]), onReady: (t) => ({ loopback, fx } = t) })
beforeEach(() => fs.writeFile(path.join(fx.cwd, 'big.txt'), 'lorem ipsum dolor sit amet, consectetur\n'.repeat(250)))

const swarm = (args: string[]) => execa(process.execPath, [BIN, ...args], { env: fx.env, reject: false, timeout: 15_000 })
const read = (n: number) => ({ content: [{ type: 'tool_use' as const, id: `toolu_${n}`, name: 'Read', input: { file_path: 'big.txt' } }] })

describe('budgets', () => {
  it('at the limit the turn ends cleanly with budget_exhausted; the lead hears at 80 %; swarm budget --add lets it finish', async () => {
    loopback.setScenario({
      agents: {
        alice: {
          rules: [{ when: { lastUserIncludes: 'carry on' }, text: 'All read.' }],
          steps: [{ ...read(0), when: { lastUserIncludes: 'read it' } }, ...Array.from({ length: 11 }, (_, i) => read(i + 1))],
        },
      },
    })
    await startAgent(fx, 'alice')
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'read it twelve times', env: fx.env })
    const [idle] = await waitFor(
      'the budget stop',
      () => leadStructured(fx, 'idle_notification', 'alice').then((l) => (l.length ? l : undefined)),
      20_000,
    )
    expect(idle).toMatchObject({ idleReason: 'budget_exhausted' })
    expect(idle!.summary).toMatch(/^stopped: budget_exhausted: alice spent \d+ of 20000 tokens/)
    const state = await readMemberState(TEAM, 'alice', fx.env)
    const spent = state!.usage!.inputTokens + state!.usage!.cacheReadTokens + state!.usage!.cacheWriteTokens + state!.usage!.outputTokens
    expect(spent).toBeGreaterThanOrEqual(20_000)
    expect(state).toMatchObject({ status: 'idle', budget: { maxTokens: 20_000 } })
    // The 80 % word to the lead came first, once.
    const warnings = (await inbox(fx, LEAD_NAME)).filter((m) => m.from === 'alice' && m.text.includes('of its budget'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.text).toContain(`swarm budget ${TEAM} alice --add`)
    // No request was cut: every one the model got was answered.
    const before = modelRequests(loopback, 'alice').length
    expect(modelRequests(loopback, 'alice').every((r) => r.status === 200)).toBe(true)

    // Waiting: a message from a teammate does not start a turn while the budget is spent.
    await sendTeamMessage({ team: TEAM, from: LEAD_NAME, to: 'alice', text: 'carry on', env: fx.env })
    await new Promise((r) => setTimeout(r, 300))
    expect(modelRequests(loopback, 'alice')).toHaveLength(before)

    // status shows spend against the budget; swarm budget raises it (signed) and the queued message runs.
    const status = await swarm(['status', TEAM])
    expect(status.stdout).toMatch(/ of 20\.0k/)
    const raised = await swarm(['budget', TEAM, 'alice', '--add-tokens', '100000'])
    expect(raised.exitCode, raised.stderr).toBe(0)
    await waitFor(
      'the turn after the raise',
      () => modelRequests(loopback, 'alice').some((r) => JSON.stringify(r.body).includes('carry on')) || undefined,
    )
    await waitFor('the second idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 2 || undefined)
    const last = (await leadStructured(fx, 'idle_notification', 'alice'))[1]
    expect(last).toMatchObject({ idleReason: 'available', summary: 'All read.' })
    expect((await readMemberState(TEAM, 'alice', fx.env))?.budget).toEqual({ maxTokens: 120_000 })
    expect((await readTeam(TEAM, fx.env)).members.find((m) => m.name === 'alice')?.maxTokens).toBe(120_000)
  })

  it('a team budget stops a member without its own; swarm budget <team> --add-tokens raises it for everyone', async () => {
    await updateMember(TEAM, 'alice', { maxTokens: undefined }, fx.env)
    await updateTeam(
      TEAM,
      (t) => {
        t.budget = { maxTokens: 15_000 }
      },
      fx.env,
    )
    loopback.setScenario({
      agents: {
        alice: {
          rules: [{ when: { lastUserIncludes: 'carry on' }, text: 'Done now.' }],
          steps: [{ ...read(0), when: { lastUserIncludes: 'read it' } }, ...Array.from({ length: 11 }, (_, i) => read(i + 1))],
        },
      },
    })
    await startAgent(fx, 'alice')
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'read it all', env: fx.env })
    const [idle] = await waitFor(
      'the team budget stop',
      () => leadStructured(fx, 'idle_notification', 'alice').then((l) => (l.length ? l : undefined)),
      20_000,
    )
    expect(idle).toMatchObject({ idleReason: 'budget_exhausted' })
    expect(idle!.summary).toMatch(/of 15000 tokens \(the team's budget\)$/)
    const raised = await swarm(['budget', TEAM, '--add-tokens', '100000'])
    expect(raised.exitCode, raised.stderr).toBe(0)
    expect((await readTeam(TEAM, fx.env)).budget).toEqual({ maxTokens: 115_000 })
    await sendTeamMessage({ team: TEAM, from: LEAD_NAME, to: 'alice', text: 'carry on', env: fx.env })
    await waitFor('the turn after the raise', async () => (await leadStructured(fx, 'idle_notification', 'alice'))[1])
    expect((await leadStructured(fx, 'idle_notification', 'alice'))[1]).toMatchObject({ idleReason: 'available', summary: 'Done now.' })
  })

  it('swarm budget and swarm compact refuse bad input with a one-line usage error', async () => {
    const none = await swarm(['budget', TEAM, 'alice'])
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toMatch(/^swarm: nothing to add — give --add USD and\/or --add-tokens N/)
    const bad = await swarm(['budget', TEAM, 'alice', '--add', '-3'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('--add "-3" is not a positive number')
    const ghost = await swarm(['compact', TEAM, 'nobody'])
    expect(ghost.exitCode).toBe(3)
  })

  it('swarm compact sends a signed compact_request the teammate acts on', async () => {
    loopback.setScenario({
      agents: {
        alice: {
          rules: [{ when: { lastUserIncludes: 'about to be compacted' }, text: '<summary>nothing much yet</summary>' }],
          steps: [{ text: 'hello', when: { lastUserIncludes: 'hi' } }],
        },
      },
    })
    await startAgent(fx, 'alice')
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'hi', env: fx.env })
    await waitFor('alice idle', () => leadStructured(fx, 'idle_notification', 'alice').then((l) => l.length > 0 || undefined))
    const out = await swarm(['compact', TEAM, 'alice', '--focus', 'greetings'])
    expect(out.exitCode, out.stderr).toBe(0)
    await waitFor('the compaction', async () => {
      const events = await readTranscript(transcriptPath(TEAM, 'alice', fx.env))
      return events.some((e) => e.kind === 'compaction' && e.stage === 'summarized' && e.focus === 'greetings') || undefined
    })
  })
})
