import { describe, expect, it } from 'vitest'
import { LEAD_NAME } from '../../../src/home/paths.js'
import { encodeStructured } from '../../../src/mailbox/messages.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { makeFixture, modelRequests, toolResults, type Fixture } from '../runtime/helpers.js'
import { leadTurnInputs, recordingClient, startLead, taskIdIn, type Lead } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
let lead: Lead | undefined
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

const agentCall = (input: Record<string, unknown>) => ({ type: 'tool_use' as const, name: 'Agent', input })
const notificationTurn = (lastUserIncludes: string, text = 'Noted.') => ({ when: { lastUserIncludes }, text })

async function setup(env: Record<string, string> = {}): Promise<void> {
  Object.assign(fx.env, env)
  lead = await startLead(fx, recordingClient(loopback).client)
}

/** The notification the lead's turns received, whole (one user turn of its own). */
async function notification(what: string): Promise<string> {
  return waitFor(what, () => leadTurnInputs(loopback).find((t) => t.startsWith('<task-notification>')), 15_000, { output: () => lead!.agent.out() })
}

describe('background subagents', () => {
  it('run_in_background returns a task id at once; the end arrives as a <task-notification> at the start of the next turn, with usage', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          {
            when: { lastUserIncludes: 'count' },
            content: [agentCall({ description: 'count files', prompt: 'How many files?', subagent_type: 'Explore', run_in_background: true })],
          },
          { text: 'Started it; waiting.' },
          notificationTurn('<task-notification>', 'It found 3 files.'),
        ],
        'team-lead/Explore-1': [
          { delayMs: 2_000, content: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }], usage: { input_tokens: 100, output_tokens: 20 } },
          { text: 'There are 3 files & <none> hidden.', usage: { input_tokens: 130, output_tokens: 10 } },
        ],
      },
    })
    await setup()
    lead!.agent.runtime.say('count the files')
    await waitFor('the tool result', () => leadTurnInputs(loopback).length >= 2)
    // The lead had its tool result before the subagent had its first answer (delayed 2 s) — under
    // load before the subagent even asked.
    const [sub] = modelRequests(loopback, 'team-lead/Explore-1')
    expect(modelRequests(loopback, LEAD_NAME)[1]!.receivedAt).toBeLessThan(sub?.answeredAt ?? Number.POSITIVE_INFINITY)
    const result = [...toolResults(loopback, LEAD_NAME).values()][0]!
    const id = taskIdIn(result.content)!
    expect(id).toMatch(/^a[0-9a-f]{16}$/)
    expect(result.content).toContain('<task-notification>')

    const note = await notification('the notification')
    expect(note).toBe(
      [
        '<task-notification>',
        `<task-id>${id}</task-id>`,
        '<status>completed</status>',
        '<summary>Agent "count files" completed</summary>',
        '<result>There are 3 files &amp; &lt;none&gt; hidden.</result>',
        note.match(/<usage>.*<\/usage>/)![0],
        '</task-notification>',
      ].join('\n'),
    )
    const usage = /<total_tokens>(\d+)<\/total_tokens><tool_uses>(\d+)<\/tool_uses><duration_ms>(\d+)<\/duration_ms>/.exec(note)!
    // What the model server reported for the subagent's two calls (cache writes included).
    const reported = modelRequests(loopback, 'team-lead/Explore-1').map((r) => r.usage!)
    expect(reported.map((u) => [u.input_tokens, u.output_tokens])).toEqual([
      [100, 20],
      [130, 10],
    ])
    expect(Number(usage[1])).toBe(
      reported.reduce((n, u) => n + u.input_tokens + u.output_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0), 0),
    )
    expect(Number(usage[2])).toBe(1)
    expect(Number(usage[3])).toBeGreaterThanOrEqual(2_000)
    // The notification is a turn of its own, after the turn that started the task.
    const inputs = leadTurnInputs(loopback)
    expect(inputs.indexOf(note)).toBe(2)
    await waitFor("the lead's answer", () => lead!.agent.out().includes('It found 3 files.'))
  }, 30_000)

  it('a foreground subagent past the auto-background limit is moved to the background and the parent told; its end is notified', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          { when: { lastUserIncludes: 'slow' }, content: [agentCall({ description: 'slow survey', prompt: 'Survey.', subagent_type: 'Explore' })] },
          { text: 'It went to the background.' },
          notificationTurn('<task-notification>'),
        ],
        'team-lead/Explore-1': [{ delayMs: 3_000, text: 'Survey done.' }],
      },
    })
    await setup({ SWARM_AUTO_BACKGROUND_MS: '300' })
    lead!.agent.runtime.say('do the slow survey')
    await waitFor('the tool result', () => toolResults(loopback, LEAD_NAME).size === 1)
    const result = [...toolResults(loopback, LEAD_NAME).values()][0]!
    expect(result.isError).toBe(false)
    expect(result.content).toMatch(/still running after 300 ms, so it was moved to the background: task id a[0-9a-f]{16}/)
    // Told before the subagent had its answer (delayed 3 s).
    expect(modelRequests(loopback, LEAD_NAME)[1]!.receivedAt).toBeLessThan(
      modelRequests(loopback, 'team-lead/Explore-1')[0]!.answeredAt ?? Number.POSITIVE_INFINITY,
    )
    const note = await notification('the notification')
    expect(note).toContain(`<task-id>${taskIdIn(result.content)}</task-id>`)
    expect(note).toContain('<status>completed</status>')
    expect(note).toContain('<result>Survey done.</result>')
  }, 30_000)

  it('a quick foreground subagent returns its report as the tool result, and no notification follows', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          { when: { lastUserIncludes: 'quick' }, content: [agentCall({ description: 'quick look', prompt: 'Look.', subagent_type: 'Explore' })] },
          { text: 'Done.' },
        ],
        'team-lead/Explore-1': [{ text: 'Nothing there.' }],
      },
      fallback: { text: 'unexpected' },
    })
    await setup({ SWARM_AUTO_BACKGROUND_MS: '5000' })
    lead!.agent.runtime.say('quick look please')
    await waitFor('the end of the turn', () => lead!.agent.out().includes('Done.'))
    expect([...toolResults(loopback, LEAD_NAME).values()][0]!.content).toBe('Nothing there.')
    await new Promise((r) => setTimeout(r, 200))
    expect(leadTurnInputs(loopback).some((t) => t.includes('<task-notification>'))).toBe(false)
  }, 30_000)

  it('a background subagent whose model call fails is notified as failed, with the error in the summary', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          {
            when: { lastUserIncludes: 'try' },
            content: [agentCall({ description: 'doomed job', prompt: 'Try.', subagent_type: 'Explore', run_in_background: true })],
          },
          { text: 'Started.' },
          notificationTurn('<task-notification>', 'It failed.'),
        ],
        'team-lead/Explore-1': [{ error: { status: 400, message: 'the model refused this request' } }],
      },
    })
    await setup()
    lead!.agent.runtime.say('try the job')
    const note = await notification('the failure notification')
    expect(note).toContain('<status>failed</status>')
    expect(note).toMatch(/<summary>Agent "doomed job" failed: 400 .*the model refused this request.*<\/summary>/)
    expect(note).not.toContain('<result>')
  }, 30_000)

  it('TaskStop stops a background subagent (its request is cut) and the parent is notified once, as stopped', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          { when: { lastUserIncludes: 'start' }, content: [agentCall({ description: 'long job', prompt: 'Work.', run_in_background: true })] },
          { text: 'Started.' },
        ],
        'team-lead/general-purpose-1': [{ delayMs: 20_000, text: 'Finished.' }],
      },
    })
    await setup()
    lead!.agent.runtime.say('start the long job')
    await waitFor(
      'the job running',
      () => modelRequests(loopback, 'team-lead/general-purpose-1').length === 1 && lead!.agent.out().includes('Started.'),
    )
    const id = taskIdIn([...toolResults(loopback, LEAD_NAME).values()][0]!.content)!
    // Now that the id is known, the lead's script can name it.
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          { when: { lastUserIncludes: 'stop it' }, content: [{ type: 'tool_use', name: 'TaskStop', input: { task_id: id } }] },
          { text: 'Stopping.' },
          notificationTurn('<task-notification>', 'It was stopped.'),
        ],
      },
    })
    lead!.agent.runtime.say('stop it')
    const note = await notification('the stop notification')
    expect(note).toContain(`<task-id>${id}</task-id>`)
    expect(note).toContain('<status>stopped</status>')
    expect(note).toContain('<summary>Agent "long job" was stopped</summary>')
    const stopResult = [...toolResults(loopback, LEAD_NAME).values()].find((r) => r.content.includes('Stopped task'))!
    expect(stopResult.content).toBe(`Stopped task ${id} ("long job"). Its notification follows.`)
    await waitFor('the subagent request cut', () => modelRequests(loopback, 'team-lead/general-purpose-1')[0]!.clientClosed)
    await waitFor("the lead's answer", () => lead!.agent.out().includes('It was stopped.'))
    expect(leadTurnInputs(loopback).filter((t) => t.includes('<task-notification>'))).toHaveLength(1)
  }, 30_000)
})

describe('a named agent in the background', () => {
  it('is a teammate; its first idle notification ends its task and reaches the lead as a task notification', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          {
            when: { lastUserIncludes: 'review' },
            content: [agentCall({ description: 'bob reviews', prompt: 'Review the change.', name: 'bob', run_in_background: true })],
          },
          { text: 'Bob is on it.' },
          notificationTurn('<task-notification>', 'Bob is done.'),
        ],
      },
    })
    await setup()
    lead!.agent.runtime.say('get a review')
    await waitFor('the spawn', () => lead!.agent.out().includes('Bob is on it.'))
    const result = [...toolResults(loopback, LEAD_NAME).values()][0]!
    expect(result.content).toMatch(/^spawned bob\nStarted teammate "bob reviews" in the background: task id a[0-9a-f]{16}/)
    // Another teammate's idle notification is not bob's.
    const idle = (from: string, summary: string) => ({
      from,
      timestamp: new Date().toISOString(),
      text: encodeStructured({ type: 'idle_notification', from, timestamp: new Date().toISOString(), idleReason: 'available', summary }),
    })
    lead!.delegation.observe(idle('carol', 'Not bob.'))
    lead!.delegation.observe(idle('bob', 'Reviewed: 2 issues in src/a.ts.'))
    const note = await notification('the teammate notification')
    expect(note).toContain(`<task-id>${taskIdIn(result.content)}</task-id>`)
    expect(note).toContain('<status>completed</status>')
    expect(note).toContain('<result>Reviewed: 2 issues in src/a.ts.</result>')
    expect(note).not.toContain('Not bob.')
  }, 30_000)
})

describe('limits', () => {
  it('nesting stops at SWARM_MAX_SUBAGENT_SPAWN_DEPTH with a clear refusal to the agent that asked', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          { when: { lastUserIncludes: 'nest' }, content: [agentCall({ description: 'level one', prompt: 'Go deeper.' })] },
          { text: 'Nested.' },
        ],
        'team-lead/general-purpose-1': [
          { content: [agentCall({ description: 'level two', prompt: 'Go deeper still.' })] },
          { text: 'Level one done.' },
        ],
        'team-lead/general-purpose-2': [
          { content: [agentCall({ description: 'level three', prompt: 'And deeper.' })] },
          { text: 'Level two done (refused).' },
        ],
      },
    })
    await setup({ SWARM_MAX_SUBAGENT_SPAWN_DEPTH: '2' })
    lead!.agent.runtime.say('nest please')
    await waitFor('the end of the turn', () => lead!.agent.out().includes('Nested.'))
    const refused = [...toolResults(loopback, 'team-lead/general-purpose-2').values()][0]!
    expect(refused.isError).toBe(true)
    expect(refused.content).toBe(
      'Not started: subagents nest at most 2 deep (SWARM_MAX_SUBAGENT_SPAWN_DEPTH) and this one would be at depth 3. Do this part yourself and report it in your own answer.',
    )
    expect([...toolResults(loopback, 'team-lead/general-purpose-1').values()][0]!.content).toBe('Level two done (refused).')
    expect([...toolResults(loopback, LEAD_NAME).values()][0]!.content).toBe('Level one done.')
    expect(
      modelRequests(loopback)
        .filter((r) => r.headers['x-swarm-agent']?.startsWith('team-lead/'))
        .map((r) => r.headers['x-swarm-agent']),
    ).not.toContain('team-lead/general-purpose-3')
  }, 30_000)

  it('the per-session quota refuses the spawn past SWARM_MAX_SUBAGENTS_PER_SESSION and says so', async () => {
    const three = [1, 2, 3].map((n) => agentCall({ description: `job ${n}`, prompt: `Job ${n}.`, subagent_type: 'Explore', run_in_background: true }))
    loopback.setScenario({
      agents: { [LEAD_NAME]: [{ when: { lastUserIncludes: 'three' }, content: three }, { text: 'Two started.' }] },
      rules: [{ when: { lastUserIncludes: 'Job' }, text: 'ok' }],
      fallback: { text: 'Noted.' },
    })
    await setup({ SWARM_MAX_SUBAGENTS_PER_SESSION: '2' })
    lead!.agent.runtime.say('start three jobs')
    await waitFor('three tool results', () => toolResults(loopback, LEAD_NAME).size === 3)
    const results = [...toolResults(loopback, LEAD_NAME).values()]
    expect(results.slice(0, 2).every((r) => !r.isError && taskIdIn(r.content))).toBe(true)
    expect(results[2]).toEqual({
      isError: true,
      content:
        'Not started: this session has started 2 subagents, its quota (SWARM_MAX_SUBAGENTS_PER_SESSION=2). Finish with the results you have, or do the work yourself.',
    })
  }, 30_000)
})
