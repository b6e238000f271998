import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../../src/store/member-state.js'
import { readTranscript, rebuildConversation, Transcript, transcriptPath, type TranscriptEvent } from '../../../src/agent/transcript.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import {
  REPO,
  TEAM,
  inbox,
  leadStructured,
  makeFixture,
  messageText,
  modelRequests,
  requestMessages,
  startAgent,
  startChildAgent,
  type Fixture,
  type TestAgent,
} from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

const t = '2025-01-01T00:00:00.000Z'
const msg = (role: 'user' | 'assistant', content: unknown): TranscriptEvent => ({ t, kind: 'message', message: { role, content } as never })
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'Read', input: { file_path: 'x' } })
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })

describe('rebuildConversation', () => {
  it('drops a trailing tool_use without its result, and the user turn that led to it', () => {
    const events: TranscriptEvent[] = [
      { t, kind: 'start', model: 'm', resume: false, pid: 1 },
      msg('user', 'hi'),
      msg('assistant', [{ type: 'text', text: 'hello' }]),
      { t, kind: 'state', state: 'idle' },
      msg('user', 'read x'),
      msg('assistant', [{ type: 'text', text: 'reading' }, toolUse('a')]),
    ]
    expect(rebuildConversation(events)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
    ])
  })

  it('drops a trailing tool_result and user text (a turn cut short), keeps complete tool exchanges', () => {
    const events = [
      msg('user', 'go'),
      msg('assistant', [toolUse('a')]),
      msg('user', [toolResult('a')]),
      msg('assistant', [{ type: 'text', text: 'done' }]),
      msg('user', 'next'),
      msg('assistant', [toolUse('b')]),
      msg('user', [toolResult('b')]),
    ]
    const rebuilt = rebuildConversation(events)
    expect(rebuilt).toHaveLength(4)
    expect(rebuilt.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'done' }] })
  })

  it('a user message recorded again after a merge (failed or partial turn) replaces the first: roles alternate, no duplicate tool_result', () => {
    const events = [
      msg('user', 'one'),
      msg('assistant', [toolUse('a')]),
      msg('user', [toolResult('a')]),
      // the runtime merged the next message into the dangling tool_result message and recorded it whole
      msg('user', [toolResult('a'), { type: 'text', text: 'two' }]),
      msg('assistant', [{ type: 'text', text: 'ok' }]),
    ]
    const rebuilt = rebuildConversation(events)
    expect(rebuilt.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(JSON.stringify(rebuilt).match(/"tool_result"/g)).toHaveLength(1)
    // Two unrelated user messages in a row (a fresh run appended to the same transcript) are joined, not lost.
    const joined = rebuildConversation([msg('user', 'lost?'), msg('user', 'fresh start'), msg('assistant', [{ type: 'text', text: 'ok' }])])
    expect(joined.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(JSON.stringify(joined[0])).toMatch(/lost\?[\s\S]*fresh start/)
  })

  it('readTranscript skips a torn last line; a missing file is empty', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-rt-transcript-'))
    try {
      const tr = new Transcript(path.join(dir, 'a/transcript.jsonl'))
      await tr.append({ kind: 'message', message: { role: 'user', content: 'hi' } }, { kind: 'state', state: 'idle' })
      await fs.appendFile(tr.file, '{"t":"x","kind":"mess')
      const events = await readTranscript(tr.file)
      expect(events.map((e) => e.kind)).toEqual(['message', 'state'])
      expect(((await fs.stat(tr.file)).mode & 0o777).toString(8)).toBe('600')
      expect(await readTranscript(path.join(dir, 'nope.jsonl'))).toEqual([])
    } finally {
      await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
    }
  })
})

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l), onReady: (t) => ({ loopback, fx } = t) })

const notes = () => leadStructured(fx, 'idle_notification', 'alice')

describe('--resume', () => {
  it('assembleAgent({resume: true}) sends the earlier conversation; an aborted turn is dropped and its message comes back', async () => {
    loopback.setScenario({
      agents: {
        alice: [
          { text: 'The password is banana.' },
          { text: 'a very long answer that never finishes', chunkDelayMs: 2_000 },
          { when: { lastUserIncludes: 'half-said' }, text: 'Picking up where I left off.' },
          { text: 'It was banana.' },
        ],
      },
    })
    const first = await startAgent(fx, 'alice')
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'remember banana', env: fx.env })
    await waitFor('the first turn', async () => (await notes()).length === 1, 10_000, { output: first.out })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'half-said thing', env: fx.env })
    await waitFor('the second request', () => modelRequests(loopback, 'alice').length === 2, 10_000, { output: first.out })
    await first.stop() // aborts the streaming turn

    const second = await startAgent(fx, 'alice', { resume: true })
    expect(second.out()).toMatch(/resumed 2 messages from .*transcript\.jsonl/)
    // The unread message is taken again, on top of the rebuilt conversation.
    await waitFor('the resumed turn', async () => (await notes()).length === 2, 10_000, { output: second.out })
    const resumed = requestMessages(modelRequests(loopback, 'alice')[2])
    expect(resumed.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(messageText(resumed[0])).toContain('remember banana')
    expect(messageText(resumed[1])).toBe('The password is banana.')
    expect(messageText(resumed[2])).toContain('half-said thing')
    expect((await inbox(fx, 'alice')).every((m) => m.read)).toBe(true)

    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'what was it?', env: fx.env })
    await waitFor('the next turn', async () => (await notes()).length === 3, 10_000, { output: second.out })
    expect(requestMessages(modelRequests(loopback, 'alice')[3])).toHaveLength(5)
  })

  it('usage and cost carry over a --resume (and start from zero without it)', async () => {
    const usage = { input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 10, cache_read_input_tokens: 20 }
    loopback.setScenario({ agents: { alice: { rules: [{ when: {}, text: 'ok', usage }] } } })
    const turn = async (a: TestAgent, n: number) => {
      await sendTeamMessage({ team: TEAM, to: 'alice', text: `m${n}`, env: fx.env })
      await waitFor(`turn ${n}`, async () => (await notes()).length === n, 10_000, { output: a.out })
    }
    const first = await startAgent(fx, 'alice')
    await turn(first, 1)
    await first.stop()
    const once = await readMemberState(TEAM, 'alice', fx.env)
    expect(once?.usage).toEqual({ inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 10, cacheReadTokens: 20 })

    const second = await startAgent(fx, 'alice', { resume: true })
    expect((await readMemberState(TEAM, 'alice', fx.env))?.usage).toEqual(once?.usage)
    await turn(second, 2)
    const twice = await readMemberState(TEAM, 'alice', fx.env)
    expect(twice).toMatchObject({ usage: { inputTokens: 2000, outputTokens: 200, cacheWriteTokens: 20, cacheReadTokens: 40 }, turns: 2 })
    expect(twice!.costUsd!).toBeCloseTo(2 * once!.costUsd!, 5) // each rounded to micro-dollars
    await second.stop()

    await startAgent(fx, 'alice')
    expect((await readMemberState(TEAM, 'alice', fx.env))?.usage).toBeUndefined()
  })

  it('after a partial (maxTurns) turn and a follow-up, a resumed agent sends a valid conversation', async () => {
    await fs.mkdir(path.join(fx.cwd, '.claude/agents'), { recursive: true })
    await fs.writeFile(path.join(fx.cwd, '.claude/agents/short.md'), '---\nname: short\ndescription: d\nmaxTurns: 1\n---\nBe brief.\n')
    loopback.setScenario({
      agents: {
        alice: [{ content: [{ type: 'tool_use', id: 'toolu_p', name: 'Glob', input: { pattern: '*' } }] }, { text: 'Second.' }, { text: 'Third.' }],
      },
    })
    const first = await startAgent(fx, 'alice', { agentType: 'short' })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'one', env: fx.env })
    await waitFor('the partial turn', async () => (await notes()).length === 1, 10_000, { output: first.out })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'two', env: fx.env })
    await waitFor('the second turn', async () => (await notes()).length === 2, 10_000, { output: first.out })
    await first.stop()

    const second = await startAgent(fx, 'alice', { agentType: 'short', resume: true })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'three', env: fx.env })
    await waitFor('the resumed turn', async () => (await notes()).length === 3, 10_000, { output: second.out })
    const sent = requestMessages(modelRequests(loopback, 'alice')[2])
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    expect(JSON.stringify(sent).match(/"type":"tool_result"/g)).toHaveLength(1)
    expect((await notes())[2].idleReason).toBe('available')
  })

  it('`swarm agent --resume` (child process) continues the conversation from the transcript', async () => {
    if (!(await fs.stat(path.join(REPO, 'dist/cli/agent.js')).catch(() => undefined))) throw new Error('dist/ is missing: run "npm run build" first')
    loopback.setScenario({ agents: { alice: [{ text: 'Noted: kiwi.' }, { text: 'You said kiwi.' }] } })
    let child = startChildAgent(fx, 'alice', ['--model', 'claude-haiku-4-5'])
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'the fruit is kiwi', env: fx.env })
    await waitFor('the first turn', async () => (await notes()).length === 1, 15_000, { output: child.output })
    expect(await readMemberState(TEAM, 'alice', fx.env)).toMatchObject({ status: 'idle', model: 'claude-haiku-4-5', pid: child.child.pid })
    expect(await child.kill('SIGTERM')).toBe(0)
    expect((await readMemberState(TEAM, 'alice', fx.env))?.status).toBe('exited')

    child = startChildAgent(fx, 'alice', ['--resume'])
    await waitFor('the resumed start', () => child!.output().includes('resumed 2 messages'), 15_000, { output: child.output })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'which fruit?', env: fx.env })
    await waitFor('the resumed turn', async () => (await notes()).length === 2, 15_000, { output: child.output })
    const sent = requestMessages(modelRequests(loopback, 'alice')[1])
    expect(sent.map((m) => messageText(m))).toEqual([
      expect.stringContaining('the fruit is kiwi'),
      'Noted: kiwi.',
      expect.stringContaining('which fruit?'),
    ])
    const starts = (await readTranscript(transcriptPath(TEAM, 'alice', fx.env))).filter((e) => e.kind === 'start')
    expect(starts.map((e) => (e as { resume: boolean }).resume)).toEqual([false, true])
    expect(await child.kill('SIGTERM')).toBe(0)
  })
})
