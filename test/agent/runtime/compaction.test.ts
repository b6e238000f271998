import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { compactionPolicy } from '../../../src/agent/compaction/thresholds.js'
import { readMemberState } from '../../../src/store/member-state.js'
import { type CompactionEvent, readTranscript, rebuildConversation, transcriptPath } from '../../../src/agent/transcript.js'
import { encodeStructured } from '../../../src/mailbox/messages.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../../src/loopback-model/scenario.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { LEAD_NAME } from '../../../src/home/paths.js'
import { createTask, getTask } from '../../../src/tasks/task-store.js'
import {
  TEAM,
  makeFixture,
  leadStructured,
  messageText,
  modelRequests,
  requestMessages,
  startAgent,
  type Fixture,
  type TestAgent,
} from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }]), onReady: (t) => ({ loopback, fx } = t) })

const SUMMARY_CUE = 'Your conversation is about to be compacted'
const summaryRule = {
  when: { lastUserIncludes: SUMMARY_CUE },
  text: '<summary>Task: read big.txt many times, then complete task #1. Left: keep reading.</summary>',
}
const read = (n: number) => ({ content: [{ type: 'tool_use' as const, id: `toolu_read_${n}`, name: 'Read', input: { file_path: 'big.txt' } }] })

/** A file of about `tokens` tokens as Read returns it (numbered lines count too). */
async function bigFile(tokens: number): Promise<void> {
  await fs.writeFile(
    path.join(fx.cwd, 'big.txt'),
    'the quick brown fox jumps over the lazy dog 0123456789 abcdef\n'.repeat(Math.ceil((tokens * 4) / 70)),
  )
}

/** alice reads big.txt `reads` times, then completes task #1 and reports. */
function readingScenario(reads: number, extra: Partial<ScenarioInput> = {}, taskId = '1'): ScenarioInput {
  const steps = [
    { ...read(0), when: { lastUserIncludes: 'read it all' } },
    ...Array.from({ length: reads - 1 }, (_, i) => read(i + 1)),
    { content: [{ type: 'tool_use' as const, id: 'toolu_done', name: 'TaskUpdate', input: { taskId, status: 'completed' } }] },
    {
      content: [
        { type: 'tool_use' as const, id: 'toolu_tell', name: 'SendMessage', input: { to: 'team-lead', message: 'all read', summary: 'done' } },
      ],
    },
    { text: 'Finished.' },
  ]
  return { agents: { alice: { rules: [summaryRule], steps } }, ...extra }
}

async function compactions(): Promise<CompactionEvent[]> {
  const events = await readTranscript(transcriptPath(TEAM, 'alice', fx.env))
  return events.filter((e): e is CompactionEvent => e.kind === 'compaction')
}

async function startWork(maxIterations = 100): Promise<TestAgent> {
  await createTask(TEAM, { subject: 'read everything', description: 'read big.txt' }, { env: fx.env })
  // A model the name rule does not know: SWARM_CONTEXT_WINDOW sets its window (the README's rule).
  const agent = await startAgent(fx, 'alice', { runtime: { autoClaimTasks: false }, model: 'loopback' })
  ;(agent.runtime as unknown as { options: { maxIterations: number } }).options.maxIterations = maxIterations
  await sendTeamMessage({ team: TEAM, to: 'alice', text: 'read it all, then complete task #1', env: fx.env })
  return agent
}

describe('thresholds', () => {
  it('follow Claude Code: window − min(max output, 20k), compact 13k below, warn 20k before; env overrides', () => {
    expect(compactionPolicy('claude-sonnet-4-6', 8192, {})).toEqual({
      window: 200_000,
      effectiveWindow: 191_808,
      compactAt: 178_808,
      warnAt: 158_808,
      auto: true,
    })
    expect(compactionPolicy('claude-sonnet-4-6[1m]', 32_000, {}).compactAt).toBe(1_000_000 - 20_000 - 13_000)
    expect(compactionPolicy('m', 8192, { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' }).compactAt).toBe(95_904)
    expect(compactionPolicy('m', 8192, { DISABLE_AUTO_COMPACT: '1' }).auto).toBe(false)
    expect(compactionPolicy('m', 8192, { SWARM_CONTEXT_WINDOW: '30000' }).compactAt).toBe(8808)
  })

  it("SWARM_CONTEXT_WINDOW sets only an unknown model's window; a window the API named wins over both", () => {
    const env = { SWARM_CONTEXT_WINDOW: '30000' }
    expect(compactionPolicy('claude-sonnet-4-6', 8192, env).window).toBe(200_000)
    expect(compactionPolicy('us.anthropic.claude-opus-4-1-v1:0', 8192, env).window).toBe(200_000)
    expect(compactionPolicy('qwen3-coder', 8192, env).window).toBe(30_000)
    expect(compactionPolicy('claude-sonnet-4-6', 8192, env, 40_000).window).toBe(40_000)
    expect(compactionPolicy('qwen3-coder', 8192, env, 12_000).window).toBe(12_000)
    // A window too small for Claude Code's fixed reserves compacts at 80 % of it, never below zero.
    expect(compactionPolicy('qwen3-coder', 8192, {}, 12_000).compactAt).toBe(9_600)
  })
})

describe('automatic compaction on the honest loopback', () => {
  it('a teammate whose reads pass the window three times keeps working and finishes its task', async () => {
    const window = 30_000
    fx.env.SWARM_CONTEXT_WINDOW = String(window)
    loopback.setScenario(readingScenario(36, { contextWindow: window }))
    await bigFile(3000)
    await startWork()
    await waitFor(
      'task #1 completed',
      async () => (await getTask(TEAM, '1', fx.env)).status === 'completed' && (await leadStructured(fx, 'idle_notification', 'alice')).length > 0,
      30_000,
    )
    const requests = modelRequests(loopback, 'alice')
    // Every read of ~3k tokens stayed in the conversation until compacted: together > 3 windows.
    const read = requests.reduce((sum, r) => sum + (r.usage ? 0 : 0), 0) + 36 * 3000
    expect(read).toBeGreaterThan(3 * window)
    expect(requests.every((r) => r.status === 200)).toBe(true)
    expect(Math.max(...requests.map((r) => r.promptTokens!))).toBeLessThanOrEqual(window)
    const summarized = (await compactions()).filter((c) => c.stage === 'summarized')
    expect(summarized.length).toBeGreaterThanOrEqual(3)
    expect(summarized.every((c) => c.trigger === 'auto' && c.tokensAfter! < c.tokensBefore)).toBe(true)
    const [idle] = await leadStructured(fx, 'idle_notification', 'alice')
    expect(idle).toMatchObject({ idleReason: 'available', completedTaskId: '1' })
    // After a compaction the request opens with the summary and the restored file.
    const after = requests.find((r) => messageText(requestMessages(r)[0]).includes('This session continues an earlier conversation'))!
    expect(messageText(requestMessages(after)[0])).toContain('Task: read big.txt many times')
    expect(messageText(requestMessages(after)[0])).toContain('Recently read file big.txt')
    expect(messageText(requestMessages(after)[0])).toContain('#1 [pending] read everything')
  })

  it('a 400 prompt-too-long answer leads to a compaction and one retry; the window it named is kept for the model', async () => {
    // The runtime believes in a 200k window; the server allows 12k: only the 400 can tell.
    loopback.setScenario(readingScenario(8, { contextWindow: 12_000 }))
    await bigFile(3000)
    const first = await startWork()
    await waitFor('task #1 completed', async () => (await getTask(TEAM, '1', fx.env)).status === 'completed', 30_000)
    const statuses = modelRequests(loopback, 'alice').map((r) => r.status)
    // One refusal, followed by a compaction and a retry the server accepts; from then on the
    // teammate measures against the window the 400 named and compacts in time.
    const refused = statuses.flatMap((s, i) => (s === 400 ? [i] : []))
    expect(refused).toHaveLength(1)
    expect(statuses[refused[0]! + 1]).toBe(200)
    const reactive = (await compactions()).filter((c) => c.trigger === 'prompt_too_long')
    expect(reactive.some((c) => c.stage === 'failed')).toBe(false)
    expect((await compactions()).some((c) => c.trigger === 'auto' && c.stage !== 'failed')).toBe(true)
    expect((await readMemberState(TEAM, 'alice', fx.env))?.contextWindows).toEqual({ loopback: 12_000 })
    await first.stop()

    // A new run (not resumed) of the member knows the window before its first request.
    loopback.requests.length = 0
    loopback.setScenario(readingScenario(8, { contextWindow: 12_000 }, '2'))
    await startWork()
    await waitFor('task #2 completed', async () => (await getTask(TEAM, '2', fx.env)).status === 'completed', 30_000)
    // No request of the new run goes past the window (the loopback refuses those); a turn after
    // the task, woken by a late notification, may find the scripted steps used up — not a window refusal.
    const second = modelRequests(loopback, 'alice')
    expect(second[0]?.status).toBe(200)
    expect(second.filter((r) => (r.promptTokens ?? 0) > 12_000).map((r) => r.promptTokens)).toEqual([])
    expect((await readMemberState(TEAM, 'alice', fx.env))?.contextWindows).toEqual({ loopback: 12_000 })
  })

  it('three failed compactions in a row stop the teammate with a failed idle notification saying why', async () => {
    fx.env.SWARM_CONTEXT_WINDOW = '30000'
    const scenario = readingScenario(12)
    const script = (scenario.agents as Record<string, { rules: unknown[] }>).alice!
    script.rules = [{ when: { lastUserIncludes: SUMMARY_CUE }, error: { status: 400, message: 'summaries are refused here' } }]
    loopback.setScenario(scenario)
    await bigFile(4500)
    const agent = await startWork()
    expect(await agent.done).toBe(1)
    const [idle] = await leadStructured(fx, 'idle_notification', 'alice')
    expect(idle!.idleReason).toBe('failed')
    expect(idle!.failureReason).toMatch(/^compaction failed 3 times in a row; last: invalid_request_error .*summaries are refused here/)
    expect((await compactions()).filter((c) => c.stage === 'failed')).toHaveLength(3)
    expect((await readMemberState(TEAM, 'alice', fx.env))?.status).toBe('exited')
  })
})

describe('compaction and the transcript', () => {
  it('keeps the full history with a marker; --resume continues from the compacted state', async () => {
    fx.env.SWARM_CONTEXT_WINDOW = '30000'
    loopback.setScenario(readingScenario(8))
    await bigFile(3000)
    const first = await startWork()
    await waitFor(
      'task done',
      async () => (await getTask(TEAM, '1', fx.env)).status === 'completed' && (await leadStructured(fx, 'idle_notification', 'alice')).length > 0,
      30_000,
    )
    await first.stop()
    const events = await readTranscript(transcriptPath(TEAM, 'alice', fx.env))
    const reads = events.filter((e) => e.kind === 'tool' && e.tool === 'Read')
    expect(reads).toHaveLength(8) // the full history is still there
    expect(events.some((e) => e.kind === 'compaction' && e.stage === 'summarized')).toBe(true)
    const rebuilt = rebuildConversation(events)
    expect(messageText(rebuilt[0] as never)).toContain('This session continues an earlier conversation')

    loopback.setScenario({ agents: { alice: [{ text: 'Resumed and ready.', when: { lastUserIncludes: 'are you there' } }] } })
    loopback.requests.length = 0
    await startAgent(fx, 'alice', { resume: true, model: 'loopback' })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'are you there?', env: fx.env })
    await waitFor('the resumed request', () => modelRequests(loopback, 'alice').length === 1)
    const body = requestMessages(modelRequests(loopback, 'alice')[0]!)
    expect(messageText(body[0])).toContain('Task: read big.txt many times')
    expect(body.length).toBe(rebuilt.length + 1)
  })

  it('swarm compact: a signed compact_request from team-lead compacts an idle teammate with its focus', async () => {
    loopback.setScenario(readingScenario(3))
    await bigFile(1500)
    await startWork()
    await waitFor('alice idle', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length > 0, 30_000)
    const request = { type: 'compact_request' as const, from: LEAD_NAME, focus: 'the reading list', timestamp: new Date().toISOString() }
    await sendTeamMessage({ team: TEAM, from: LEAD_NAME, to: 'alice', text: encodeStructured(request), env: fx.env })
    await waitFor('the manual compaction', async () => (await compactions()).some((c) => c.stage === 'summarized'))
    const done = (await compactions()).find((c) => c.stage === 'summarized')!
    expect(done).toMatchObject({ trigger: 'manual', focus: 'the reading list' })
    const summaryRequest = modelRequests(loopback, 'alice').at(-1)!
    expect(messageText(requestMessages(summaryRequest).at(-1))).toContain('Pay special attention to: the reading list')
    // An unsigned one (from a teammate's inbox write) is ignored.
    await sendTeamMessage({ team: TEAM, from: 'alice', to: 'alice', text: encodeStructured({ ...request, from: 'alice' }), env: fx.env }).catch(
      () => undefined,
    )
  })
})
