import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../../src/store/member-state.js'
import { readTranscript, transcriptPath } from '../../../src/agent/transcript.js'
import { appendMessages } from '../../../src/mailbox/inbox.js'
import { encodeStructured } from '../../../src/mailbox/messages.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { inboxPath, LEAD_NAME } from '../../../src/home/paths.js'
import { claimTask, createTask, getTask } from '../../../src/tasks/task-store.js'
import {
  TEAM,
  makeFixture,
  inbox,
  inboxSync,
  leadStructured,
  messageText,
  modelRequests,
  requestMessages,
  sleep,
  startAgent,
  toolResults,
  type Fixture,
} from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }, { name: 'bob' }, { name: 'carol' }]), onReady: (t) => ({ loopback, fx } = t) })

const start = async (name: string, opts: Parameters<typeof startAgent>[2] = {}) => {
  const a = await startAgent(fx, name, opts)
  return a
}
const status = async (name: string) => (await readMemberState(TEAM, name, fx.env))?.status
const idle = (name: string) => async () => (await status(name)) === 'idle'

describe('a teammate turn', () => {
  it('reads, writes, runs Bash, reports with SendMessage, goes idle with exactly one notification, marks read after the turn', async () => {
    await fs.writeFile(path.join(fx.cwd, 'notes.txt'), 'hello notes\n')
    const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 50, cache_read_input_tokens: 30 }
    loopback.setScenario({
      agents: {
        alice: [
          {
            content: [
              { type: 'text', text: 'Reading.' },
              { type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: 'notes.txt' } },
            ],
            usage,
          },
          {
            when: { toolResultIncludes: 'hello notes' },
            content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'out.txt', content: 'copied: hello notes\n' } }],
            usage,
          },
          {
            content: [{ type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'tr a-z A-Z < out.txt > upper.txt && cat upper.txt' } }],
            usage,
          },
          {
            when: { toolResultIncludes: 'COPIED: HELLO NOTES' },
            content: [
              {
                type: 'tool_use',
                id: 'toolu_s',
                name: 'SendMessage',
                input: { to: 'team-lead', message: 'upper.txt is written', summary: 'finished the copy' },
              },
            ],
            usage,
          },
          { text: 'All done.', usage },
        ],
      },
    })
    // At the last model call of the turn, the message that started it is still unread.
    let readDuringTurn: boolean | undefined
    loopback.onRequest = (r) => {
      if (r.played?.index === 4) readDuringTurn = inboxSync(fx, 'alice').find((m) => m.text === 'copy the notes')?.read
    }
    const alice = await start('alice', { model: 'claude-opus-4-7' })
    await waitFor('alice to start idle', idle('alice'))
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'copy the notes', summary: 'copy job', env: fx.env })

    await waitFor('the idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length > 0, 10_000, {
      output: alice.out,
    })
    await sleep(400) // anything that would send a second notification has had time to
    const notes = await leadStructured(fx, 'idle_notification', 'alice')
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatchObject({ from: 'alice', idleReason: 'available', summary: 'All done.' })
    expect(notes[0].completedTaskId).toBeUndefined()

    expect(await fs.readFile(path.join(fx.cwd, 'out.txt'), 'utf8')).toBe('copied: hello notes\n')
    expect(await fs.readFile(path.join(fx.cwd, 'upper.txt'), 'utf8')).toBe('COPIED: HELLO NOTES\n')
    const results = toolResults(loopback, 'alice')
    for (const id of ['toolu_r', 'toolu_w', 'toolu_b', 'toolu_s']) expect(results.get(id)?.isError, id).toBe(false)
    expect(results.get('toolu_s')?.content).toBe('Message sent to team-lead.')

    const report = (await inbox(fx, LEAD_NAME)).find((m) => m.from === 'alice' && m.text === 'upper.txt is written')
    expect(report).toMatchObject({ summary: 'finished the copy', read: false })
    expect(readDuringTurn).toBe(false)
    expect((await inbox(fx, 'alice')).find((m) => m.text === 'copy the notes')?.read).toBe(true)

    // The model saw the message in the docs/architecture.md §4 form, with all five calls in one conversation.
    const reqs = modelRequests(loopback, 'alice')
    expect(reqs).toHaveLength(5)
    expect(messageText(requestMessages(reqs[0])[0])).toMatch(
      /^<teammate-message teammate_id="team-lead" summary="copy job">\ncopy the notes\n<\/teammate-message>$/,
    )
    expect(requestMessages(reqs[4])).toHaveLength(9)

    // state.json: usage summed over the five calls, a cost, the model used, idle.
    const state = await readMemberState(TEAM, 'alice', fx.env)
    expect(state).toMatchObject({
      status: 'idle',
      model: 'claude-opus-4-7',
      modelSource: '--model',
      usage: { inputTokens: 500, outputTokens: 100, cacheWriteTokens: 250, cacheReadTokens: 150 },
      turns: 5,
    })
    // opus 4.7 at $5/$25 per MTok, cache write 1.25×, cache read 0.1× input.
    const expected = (500 * 5 + 100 * 25 + 250 * 6.25 + 150 * 0.5) / 1e6
    expect(state?.costUsd).toBeCloseTo(expected, 5) // rounded to micro-dollars
    expect(state?.costUsd).toBeGreaterThan(0)
    expect(state?.pid).toBe(process.pid)

    const states = (await readTranscript(transcriptPath(TEAM, 'alice', fx.env))).flatMap((e) => (e.kind === 'state' ? [e.state] : []))
    expect(states).toEqual(['idle', 'working', 'idle'])
    expect(await alice.stop()).toBe(0)
    expect(await status('alice')).toBe('exited')
    // A stop is not a transition to idle: still exactly one notification.
    expect(await leadStructured(fx, 'idle_notification', 'alice')).toHaveLength(1)
  })

  it('takes several messages that arrive while idle into ONE user turn', async () => {
    loopback.setScenario({ agents: { alice: [{ text: 'Got all three.' }] } })
    const alice = await start('alice')
    await waitFor('alice to start idle', idle('alice'))
    await appendMessages(inboxPath(TEAM, 'alice', fx.env), [
      { from: 'bob', text: 'first <b>&"quoted"', summary: 'bob says "hi"', color: 'green' },
      { from: 'carol', text: 'second', summary: 'carol & co' },
      { from: 'bob', text: 'third' },
    ])
    await waitFor('the idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 1, 10_000, {
      output: alice.out,
    })
    await sleep(200)
    const reqs = modelRequests(loopback, 'alice')
    expect(reqs).toHaveLength(1)
    const messages = requestMessages(reqs[0])
    expect(messages).toHaveLength(1)
    expect(messages[0].role).toBe('user')
    const text = messageText(messages[0])
    expect(text.match(/<teammate-message /g)).toHaveLength(3)
    expect(text).toContain(
      '<teammate-message teammate_id="bob" color="green" summary="bob says &quot;hi&quot;">\nfirst <b>&"quoted"\n</teammate-message>',
    )
    expect(text).toContain('<teammate-message teammate_id="carol" summary="carol &amp; co">\nsecond\n</teammate-message>')
    expect(text).toContain('<teammate-message teammate_id="bob">\nthird\n</teammate-message>')
    expect(text.indexOf('first')).toBeLessThan(text.indexOf('second'))
    expect(text.indexOf('second')).toBeLessThan(text.indexOf('third'))
    expect((await inbox(fx, 'alice')).every((m) => m.read)).toBe(true)
    expect(await leadStructured(fx, 'idle_notification', 'alice')).toHaveLength(1)
  })

  it('messages that arrive during a turn are batched into the next one, with one notification per idle', async () => {
    loopback.setScenario({ agents: { alice: [{ text: 'One.', delayMs: 400 }, { text: 'Two.' }] } })
    const alice = await start('alice')
    await waitFor('alice to start idle', idle('alice'))
    await sendTeamMessage({ team: TEAM, from: 'bob', to: 'alice', text: 'm1', env: fx.env })
    await waitFor('the first request', () => modelRequests(loopback, 'alice').length === 1)
    await sendTeamMessage({ team: TEAM, from: 'bob', to: 'alice', text: 'm2', env: fx.env })
    await sendTeamMessage({ team: TEAM, from: 'carol', to: 'alice', text: 'm3', env: fx.env })
    await waitFor('an idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 1, 10_000, {
      output: alice.out,
    })
    await waitFor('the second turn', () => modelRequests(loopback, 'alice').length === 2 && status('alice').then((s) => s === 'idle'), 10_000, {
      output: alice.out,
    })
    await sleep(300)
    const second = requestMessages(modelRequests(loopback, 'alice')[1])
    // m1, One., then m2 and m3 together.
    expect(second).toHaveLength(3)
    expect(messageText(second[2]).match(/<teammate-message /g)).toHaveLength(2)
    expect(messageText(second[2])).toMatch(/m2[\s\S]*m3/)
    // m2 and m3 were queued when the first turn ended: no idle in between, one notification in all.
    const notes = await leadStructured(fx, 'idle_notification', 'alice')
    expect(notes.map((n) => n.summary)).toEqual(['Two.'])
  })
})

describe('task auto-claim', () => {
  it('claims the next unowned unblocked task, completes it with TaskUpdate, reports completedTaskId; never a blocked one', async () => {
    const blocker = await createTask(TEAM, { subject: 'blocker', description: 'bob is on it' }, { env: fx.env })
    expect((await claimTask(TEAM, blocker.id, 'bob', { env: fx.env })).ok).toBe(true)
    const blocked = await createTask(TEAM, { subject: 'blocked work', description: 'after the blocker', blockedBy: [blocker.id] }, { env: fx.env })
    const free = await createTask(TEAM, { subject: 'free work', description: 'write done.txt' }, { env: fx.env })
    const taskFile = path.join(fx.home, 'tasks', TEAM, `${free.id}.json`)
    let duringTurn: { owner?: string; status?: string } | undefined
    loopback.onRequest = (r) => {
      if (r.played?.index === 0) duringTurn = JSON.parse(readFileSync(taskFile, 'utf8'))
    }
    loopback.setScenario({
      agents: {
        alice: [
          {
            when: { lastUserIncludes: `You claimed task #${free.id}: free work` },
            content: [
              { type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'done.txt', content: 'done' } },
              { type: 'tool_use', id: 'toolu_u', name: 'TaskUpdate', input: { taskId: free.id, status: 'completed' } },
            ],
          },
          { text: 'Finished the free work.' },
        ],
      },
    })
    const alice = await start('alice')
    await waitFor('the idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length > 0, 10_000, {
      output: alice.out,
    })
    await sleep(300)
    expect(duringTurn).toMatchObject({ owner: 'alice', status: 'in_progress' })
    expect(await getTask(TEAM, free.id, fx.env)).toMatchObject({ owner: 'alice', status: 'completed' })
    expect(await getTask(TEAM, blocked.id, fx.env)).toMatchObject({ status: 'pending' })
    expect((await getTask(TEAM, blocked.id, fx.env)).owner).toBeUndefined()
    const notes = await leadStructured(fx, 'idle_notification', 'alice')
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatchObject({ completedTaskId: free.id, completedStatus: 'resolved', summary: 'Finished the free work.' })
    expect(toolResults(loopback, 'alice').get('toolu_u')).toMatchObject({ isError: false })
    expect(modelRequests(loopback, 'alice')).toHaveLength(2)
    expect((await readMemberState(TEAM, 'alice', fx.env))?.currentTask).toBeUndefined()
  })

  it('an idle teammate notices a task created later, without any message to wake it', async () => {
    loopback.setScenario({
      agents: {
        alice: [
          {
            when: { lastUserIncludes: 'You claimed task #' },
            content: [{ type: 'tool_use', id: 'toolu_late', name: 'TaskUpdate', input: { taskId: '1', status: 'completed' } }],
          },
          { text: 'Late task done.' },
        ],
      },
    })
    const alice = await start('alice')
    await waitFor('alice idle', idle('alice'), 10_000, { output: alice.out })
    expect(modelRequests(loopback, 'alice')).toHaveLength(0)
    const task = await createTask(TEAM, { subject: 'late work', description: 'created after alice went idle' }, { env: fx.env })
    await waitFor('the late task claimed and completed', async () => (await getTask(TEAM, task.id, fx.env)).status === 'completed', 10_000, {
      output: alice.out,
    })
    expect(await getTask(TEAM, task.id, fx.env)).toMatchObject({ owner: 'alice' })
  })

  it('a message that arrives during the task turn is answered first; the one idle notification still names the completed task', async () => {
    const task = await createTask(TEAM, { subject: 'solo', description: 'just finish it' }, { env: fx.env })
    loopback.setScenario({
      agents: {
        alice: [
          { content: [{ type: 'tool_use', id: 'toolu_u', name: 'TaskUpdate', input: { taskId: task.id, status: 'completed' } }] },
          { text: 'Task done.', delayMs: 300 },
          { when: { lastUserIncludes: 'quick question' }, text: 'Answered bob.' },
        ],
      },
    })
    const alice = await start('alice')
    await waitFor('the second call of the task turn', () => modelRequests(loopback, 'alice').length === 2, 10_000, { output: alice.out })
    await sendTeamMessage({ team: TEAM, from: 'bob', to: 'alice', text: 'quick question', env: fx.env })
    await waitFor('the idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length > 0, 10_000, {
      output: alice.out,
    })
    await sleep(300)
    const notes = await leadStructured(fx, 'idle_notification', 'alice')
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatchObject({ summary: 'Answered bob.', completedTaskId: task.id })
  })

  it('autoClaimTasks: false leaves tasks alone', async () => {
    const t = await createTask(TEAM, { subject: 'free', description: 'x' }, { env: fx.env })
    await start('alice', { runtime: { autoClaimTasks: false } })
    await waitFor('alice idle', idle('alice'))
    await sleep(200)
    expect(await getTask(TEAM, t.id, fx.env)).toMatchObject({ status: 'pending' })
    expect(modelRequests(loopback)).toHaveLength(0)
  })
})

describe('external mode (the lead console hands messages in)', () => {
  it('say() is a plain user turn, deliver() a teammate message marked read after the turn; no watcher, no self-notification', async () => {
    loopback.setScenario({ agents: { 'team-lead': [{ text: 'Hello human.' }, { text: 'Noted, bob.' }] } })
    const lead = await start(LEAD_NAME, { runtime: { external: true } })
    await waitFor('the lead idle', idle(LEAD_NAME))
    // A message in the lead's inbox is NOT picked up by the runtime itself in external mode.
    await sendTeamMessage({ team: TEAM, from: 'bob', to: LEAD_NAME, text: 'status: green', env: fx.env })
    lead.runtime.say('hi there')
    await waitFor('the say turn', () => modelRequests(loopback, LEAD_NAME).length === 1 && status(LEAD_NAME).then((s) => s === 'idle'), 10_000, {
      output: lead.out,
    })
    await sleep(150)
    expect(modelRequests(loopback, LEAD_NAME)).toHaveLength(1)
    // (the last message is sent as a block carrying the prompt-cache breakpoint)
    expect(requestMessages(modelRequests(loopback, LEAD_NAME)[0])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi there', cache_control: { type: 'ephemeral' } }] },
    ])

    const entry = (await inbox(fx, LEAD_NAME)).find((m) => m.text === 'status: green')!
    expect(entry.read).toBe(false)
    lead.runtime.deliver([entry])
    await waitFor(
      'the delivered message read',
      async () => (await inbox(fx, LEAD_NAME)).find((m) => m.text === 'status: green')?.read === true,
      10_000,
      { output: lead.out },
    )
    const second = requestMessages(modelRequests(loopback, LEAD_NAME)[1])
    expect(messageText(second.at(-1))).toContain('<teammate-message teammate_id="bob"')
    expect(await leadStructured(fx, 'idle_notification')).toHaveLength(0)
    expect(lead.out()).toContain('Hello human.')
  })

  it('route: consume marks a message read without a turn; queue sends even a control message to the model', async () => {
    loopback.setScenario({ agents: { 'team-lead': [{ text: 'Saw it.' }] } })
    const routed: string[] = []
    const lead = await start(LEAD_NAME, {
      runtime: {
        route: (entry, structured) => {
          routed.push(structured?.type ?? entry.text)
          if (structured?.type === 'idle_notification') return 'consume'
          return structured?.type === 'shutdown_request' ? 'queue' : 'default'
        },
      },
    })
    await waitFor('the lead idle', idle(LEAD_NAME))
    const note = encodeStructured({ type: 'idle_notification', from: 'bob', timestamp: new Date().toISOString() })
    await sendTeamMessage({ team: TEAM, from: 'bob', to: LEAD_NAME, text: note, env: fx.env })
    await waitFor('the consumed notification', async () => (await inbox(fx, LEAD_NAME))[0]?.read === true, 15_000, { output: lead.out })
    expect(modelRequests(loopback, LEAD_NAME)).toHaveLength(0)
    const order = encodeStructured({ type: 'shutdown_request', requestId: 'x', from: 'bob', timestamp: new Date().toISOString() })
    await sendTeamMessage({ team: TEAM, from: 'bob', to: LEAD_NAME, text: order, env: fx.env })
    await waitFor('the queued message turn', () => modelRequests(loopback, LEAD_NAME).length === 1, 15_000, { output: lead.out })
    expect(messageText(requestMessages(modelRequests(loopback, LEAD_NAME)[0]).at(-1))).toContain('"type":"shutdown_request"')
    expect(lead.out()).not.toContain('ignored')
    expect(routed).toEqual(['idle_notification', 'shutdown_request'])
  })
})

describe('a stop signal that fired while the agent was being assembled', () => {
  it('ends run() at once (exited, code 0), leaving no inbox or tasks watch open', async () => {
    // A closed fs.watch leaves the list on the next turn of the event loop.
    const settle = () => sleep(50)
    const watches = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length
    await settle()
    const before = watches()
    const abort = new AbortController()
    abort.abort()
    const a = await start('alice', { signal: abort.signal })
    expect(await Promise.race([a.done, sleep(5_000).then(() => 'still running after 5 s')])).toBe(0)
    expect(await status('alice')).toBe('exited')
    await settle()
    expect(watches()).toBe(before)
  })
})
