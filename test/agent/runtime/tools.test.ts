import fs from 'node:fs/promises'
import path from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../../src/store/member-state.js'
import { runSubagent } from '../../../src/agent/subagents/fresh.js'
import { allowAll, runTool, type AnyTool, type ToolContext } from '../../../src/agent/tool.js'
import { allTools } from '../../../src/agent/tool-registry.js'
import { createSendMessageTool, type TeamToolHost } from '../../../src/agent/tools/send-message.js'
import { createTaskTools } from '../../../src/agent/tools/tasks.js'
import { runTurn } from '../../../src/agent/turn.js'
import { assembleAgent } from '../../../src/agent/start.js'
import { encodeStructured, parseStructured, type StructuredMessage } from '../../../src/mailbox/messages.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { loadLeadPublicKey } from '../../../src/trust/keys.js'
import { teamLeadSigner } from '../../../src/trust/sign.js'
import { verifyLeadMessage } from '../../../src/trust/swarm-scheme.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { LEAD_NAME } from '../../../src/home/paths.js'
import { claimTask, getTask } from '../../../src/tasks/task-store.js'
import {
  TEAM,
  makeFixture,
  inbox,
  leadStructured,
  messageText,
  modelRequests,
  requestMessages,
  startAgent,
  toolResults,
  type Fixture,
} from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'
import { unsandboxed } from '../../../src/sandbox/unsandboxed.js'
import { unmetered } from '../../../src/agent/spend-meter.js'

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }, { name: 'bob' }]), onReady: (t) => ({ loopback, fx } = t) })

const host = (name = 'alice', extra: Partial<TeamToolHost> = {}): TeamToolHost => ({
  team: TEAM,
  name,
  env: fx.env,
  turnLog: { completedTaskIds: [], shutdownResponses: new Map() },
  ...extra,
})
const ctx = (name = 'alice'): ToolContext => ({
  cwd: fx.cwd,
  signal: new AbortController().signal,
  agentName: name,
  teamName: TEAM,
  env: fx.env,
  checkPermission: allowAll,
  sandbox: unsandboxed('a test context'),
  meter: unmetered('a test context'),
})
const client = () => new Anthropic({ apiKey: 'test', baseURL: loopback.url, maxRetries: 0 })

describe('SendMessage', () => {
  it('plain text to a member, to * (everyone but the sender); a non-member is an error and creates no inbox', async () => {
    const tool = createSendMessageTool(host('alice', { color: 'green' }))
    expect(await runTool(tool, { to: 'bob', message: 'hello bob', summary: 'greeting' }, ctx())).toEqual({ content: 'Message sent to bob.' })
    expect((await inbox(fx, 'bob'))[0]).toMatchObject({ from: 'alice', text: 'hello bob', summary: 'greeting', color: 'green', read: false })
    expect(await runTool(tool, { to: '*', message: 'all hands' }, ctx())).toEqual({ content: 'Message sent to 2 members.' })
    expect((await inbox(fx, LEAD_NAME)).map((m) => m.text)).toEqual(['all hands'])
    expect((await inbox(fx, 'alice')).length).toBe(0)
    const bad = await runTool(tool, { to: 'mallory', message: 'x' }, ctx())
    expect(bad.isError).toBe(true)
    expect(bad.content).toMatch(/mallory/)
    await expect(fs.stat(path.join(fx.home, 'teams', TEAM, 'inboxes', 'mallory.json'))).rejects.toThrow()
  })

  it('shutdown_response: approve → shutdown_approved, reject → shutdown_rejected, recorded in the turn log; only to team-lead', async () => {
    const h = host('alice')
    const tool = createSendMessageTool(h)
    await runTool(tool, { to: LEAD_NAME, message: { type: 'shutdown_response', request_id: 'r1', approve: true } }, ctx())
    await runTool(tool, { to: LEAD_NAME, message: { type: 'shutdown_response', request_id: 'r2', approve: false, reason: 'busy' } }, ctx())
    expect(await leadStructured(fx, 'shutdown_approved', 'alice')).toEqual([expect.objectContaining({ requestId: 'r1', from: 'alice' })])
    expect(await leadStructured(fx, 'shutdown_rejected', 'alice')).toEqual([expect.objectContaining({ requestId: 'r2', reason: 'busy' })])
    expect(h.turnLog.shutdownResponses.get('r2')).toEqual({ approve: false, reason: 'busy' })
    const toBob = await runTool(tool, { to: 'bob', message: { type: 'shutdown_response', request_id: 'r3', approve: true } }, ctx())
    expect(toBob).toEqual({ content: 'a shutdown_response goes to team-lead', isError: true })
    const other = await runTool(tool, { to: LEAD_NAME, message: { type: 'idle_notification' } }, ctx())
    expect(other.isError).toBe(true)
    expect(other.content).toMatch(/unsupported structured message type "idle_notification"/)
    // A teammate cannot order a shutdown.
    expect((await runTool(tool, { to: 'bob', message: { type: 'shutdown_request', reason: 'x' } }, ctx())).isError).toBe(true)
  })

  it("the lead's messages are signed, and its structured shutdown_request verifies at the teammate", async () => {
    const sign = await teamLeadSigner(TEAM, fx.env)
    const tool = createSendMessageTool(host(LEAD_NAME, { sign }))
    await runTool(tool, { to: 'bob', message: { type: 'shutdown_request', request_id: 'sd-9', reason: 'done' } }, ctx(LEAD_NAME))
    const [entry] = await inbox(fx, 'bob')
    expect(parseStructured(entry.text)).toMatchObject({ type: 'shutdown_request', requestId: 'sd-9', from: LEAD_NAME, reason: 'done' })
    expect(verifyLeadMessage(await loadLeadPublicKey(TEAM, fx.env), entry, 'bob')).toBe(true)
    // sendTeamMessage signs team-lead's messages only.
    await sendTeamMessage({ team: TEAM, from: 'alice', to: 'bob', text: 'from alice', env: fx.env })
    expect((await inbox(fx, 'bob'))[1].leadSig).toBeUndefined()
  })
})

describe('task tools', () => {
  it('TaskCreate, TaskList, TaskGet, TaskUpdate (claim, complete, dependencies) with errors as results', async () => {
    const h = host('alice')
    const [create, get, list, update] = createTaskTools(h)
    const c = ctx()
    expect(await runTool(create, { subject: 'write docs', description: 'the README' }, c)).toEqual({ content: 'Created task #1: write docs' })
    expect(await runTool(create, { subject: 'ship', description: 'release', activeForm: 'Shipping' }, c)).toEqual({
      content: 'Created task #2: ship',
    })
    expect(await runTool(update, { taskId: '2', addBlockedBy: ['1'] }, c)).toEqual({ content: 'Updated #2 [pending] ship — blocked by #1' })
    expect((await runTool(list, {}, c)).content).toBe('#1 [pending] write docs — blocks #2\n#2 [pending] ship — blocked by #1')
    expect((await runTool(get, { taskId: '1' }, c)).content).toBe('#1 [pending] write docs — blocks #2\n\nthe README')

    expect(await runTool(update, { taskId: '2', owner: 'alice' }, c)).toEqual({ content: 'Cannot claim #2: blocked', isError: true })
    expect((await runTool(update, { taskId: '1', owner: 'alice' }, c)).content).toBe('Updated #1 [in_progress] write docs (owner: alice) — blocks #2')
    expect(h.turnLog.completedTaskIds).toEqual([])
    expect((await runTool(update, { taskId: '1', status: 'completed' }, c)).content).toContain('[completed]')
    expect(h.turnLog.completedTaskIds).toEqual(['1'])

    expect((await claimTask(TEAM, '2', 'bob', { env: fx.env })).ok).toBe(true)
    expect(await runTool(update, { taskId: '2', owner: 'alice' }, c)).toEqual({ content: 'Cannot claim #2: already_claimed', isError: true })
    expect((await getTask(TEAM, '2', fx.env)).owner).toBe('bob')
    const missing = await runTool(get, { taskId: '99' }, c)
    expect(missing.isError).toBe(true)
    expect(missing.content).toMatch(/99/)
    expect((await runTool(get, { taskId: '../x' }, c)).isError).toBe(true)
    expect((await runTool(create, { subject: '', description: 'x' }, c)).content).toMatch(/^Invalid input for TaskCreate: subject/)
  })
})

describe('runTurn', () => {
  const tools = allTools().filter((t) => t.name === 'Read') as AnyTool[]
  const base = () => ({
    client: client(),
    model: 'claude-haiku-4-5',
    system: 'You are agent "solo".',
    tools,
    maxIterations: 5,
    toolContext: ctx('solo'),
  })

  it('streams text, answers an unknown tool with is_error, records every event, returns done', async () => {
    loopback.setScenario({
      agents: {
        solo: [
          {
            content: [
              { type: 'text', text: 'Trying.' },
              { type: 'tool_use', id: 'toolu_x', name: 'Teleport', input: {} },
            ],
            usage: { input_tokens: 7, output_tokens: 3 },
          },
          { when: { toolResultIsError: true }, text: 'No teleport, then.' },
        ],
      },
    })
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'go' }]
    let streamed = ''
    const usage: number[] = []
    const recorded: string[] = []
    const ended: string[] = []
    const result = await runTurn({
      ...base(),
      messages,
      signal: new AbortController().signal,
      onText: (d) => (streamed += d),
      onUsage: (u) => usage.push(u.inputTokens),
      onToolEnd: (name, _i, r) => ended.push(`${name}:${r.isError}`),
      record: async (...events) => void recorded.push(...events.map((e) => e.kind)),
    })
    expect(result).toEqual({ status: 'done', text: 'No teleport, then.', iterations: 2, toolCalls: [{ name: 'Teleport', input: {}, isError: true }] })
    expect(streamed).toBe('Trying.No teleport, then.')
    expect(usage[0]).toBe(7)
    expect(ended).toEqual(['Teleport:true'])
    expect(recorded).toEqual(['message', 'usage', 'tool', 'message', 'message', 'usage'])
    expect(toolResults(loopback, 'solo').get('toolu_x')?.content).toMatch(/^No such tool: Teleport\. Available: Read/)
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(modelRequests(loopback, 'solo')[0].stream).toBe(true)
  })

  it('a response cut off at max_tokens in the middle of a tool call: the call is not run, but answered, and the model goes on', async () => {
    const write = allTools().filter((t) => t.name === 'Write') as AnyTool[]
    loopback.setScenario({
      agents: {
        solo: [
          {
            content: [{ type: 'tool_use', id: 'toolu_cut', name: 'Write', input: { file_path: 'big.txt', content: 'trunc' } }],
            stop_reason: 'max_tokens',
          },
          { when: { toolResultIsError: true }, text: 'I will write it in smaller parts.' },
        ],
      },
    })
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'write a big file' }]
    const result = await runTurn({ ...base(), tools: write, messages, signal: new AbortController().signal })
    expect(result).toMatchObject({ status: 'done', text: 'I will write it in smaller parts.', iterations: 2 })
    await expect(fs.stat(path.join(fx.cwd, 'big.txt'))).rejects.toThrow()
    expect(toolResults(loopback, 'solo').get('toolu_cut')).toMatchObject({ isError: true })
    expect(toolResults(loopback, 'solo').get('toolu_cut')?.content).toMatch(/max_tokens/)
    // Every tool_use has its tool_result: the conversation stays valid for the next turn.
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })

  it('maxIterations reached → partial; an aborted signal → aborted without a request', async () => {
    loopback.setScenario({ agents: { solo: { rules: [{ when: {}, content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'nope' } }] }] } } })
    const partial = await runTurn({ ...base(), maxIterations: 3, messages: [{ role: 'user', content: 'go' }], signal: new AbortController().signal })
    expect(partial).toMatchObject({ status: 'partial', iterations: 3 })
    expect(partial.toolCalls).toHaveLength(3)
    const before = loopback.requests.length
    const aborted = await runTurn({ ...base(), messages: [{ role: 'user', content: 'go' }], signal: AbortSignal.abort() })
    expect(aborted).toEqual({ status: 'aborted', text: '', iterations: 0, toolCalls: [] })
    expect(loopback.requests.length).toBe(before)
  })
})

describe('runSubagent', () => {
  it('runs a fresh conversation with the type’s tools (no team tools) and returns its final text', async () => {
    loopback.setScenario({
      agents: { parent: [{ content: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*.md' } }] }, { text: 'Report: nothing found.' }] },
    })
    const report = await runSubagent({
      team: TEAM,
      parent: 'parent',
      cwd: fx.cwd,
      env: fx.env,
      client: client(),
      prompt: 'look around',
      agentType: 'Explore',
      checkPermission: allowAll,
      sandbox: unsandboxed('a test context'),
      meter: unmetered('a test context'),
      signal: new AbortController().signal,
    })
    expect(report).toBe('Report: nothing found.')
    const [first] = modelRequests(loopback, 'parent')
    const names = ((first.body as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name)
    expect(names).toContain('Glob')
    expect(names).not.toContain('SendMessage')
    expect(names).not.toContain('TaskUpdate')
    expect(names).not.toContain('Write')
    // (the last message goes as a block carrying the prompt-cache breakpoint)
    expect(requestMessages(first)).toEqual([{ role: 'user', content: [{ type: 'text', text: 'look around', cache_control: { type: 'ephemeral' } }] }])
    // The type's prompt is the cached first block; what names this run follows it.
    const system = (first.body as { system: Array<{ text: string; cache_control?: unknown }> }).system
    expect(system[0]!.cache_control).toBeDefined()
    expect(system[1]!.text).toContain('one-off subagent of parent')
  })

  it('a definition with maxTurns cut short → marked partial; an unknown type → NotFoundError', async () => {
    await fs.mkdir(path.join(fx.cwd, '.claude/agents'), { recursive: true })
    await fs.writeFile(path.join(fx.cwd, '.claude/agents/one.md'), '---\nname: one\ndescription: d\nmaxTurns: 1\n---\nOne call only.\n')
    loopback.setScenario({
      agents: {
        parent: {
          rules: [
            {
              when: {},
              content: [
                { type: 'text', text: 'Halfway.' },
                { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
              ],
            },
          ],
        },
      },
    })
    const req = {
      team: TEAM,
      parent: 'parent',
      cwd: fx.cwd,
      env: fx.env,
      client: client(),
      prompt: 'x',
      checkPermission: allowAll,
      sandbox: unsandboxed('a test context'),
      meter: unmetered('a test context'),
      signal: new AbortController().signal,
    }
    expect(await runSubagent({ ...req, agentType: 'one' })).toBe('(partial: stopped after 1 model calls)\nHalfway.')
    await expect(runSubagent({ ...req, agentType: 'nope' })).rejects.toThrow(/unknown agent type "nope"/)
  })
})

describe('assembleAgent', () => {
  it('the permissions factory sees the agent; its check runs on every call; onControl gets verified control messages; close on exit', async () => {
    const checked: string[] = []
    const controls: StructuredMessage['type'][] = []
    let closed = false
    let assembly: { name: string; mode: string; cwd: string } | undefined
    loopback.setScenario({
      agents: {
        alice: [
          {
            content: [
              { type: 'tool_use', id: 'toolu_g', name: 'Glob', input: { pattern: '*' } },
              { type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'touch should-not-exist' } },
            ],
          },
          { text: 'Could not run it.' },
        ],
      },
    })
    const alice = await startAgent(fx, 'alice', {
      mode: 'acceptEdits',
      permissions: (a) => {
        assembly = { name: a.name, mode: a.mode, cwd: a.cwd }
        return {
          check: async (tool) => {
            checked.push(tool.name)
            if (tool.name !== 'Bash') return { behavior: 'allow' }
            await a.setStatus('waiting', 'asking about Bash')
            expect(a.state.current.status).toBe('waiting')
            await a.setStatus('working')
            return { behavior: 'deny', message: 'no shell today' }
          },
          sandbox: unsandboxed('a test layer'),
          onControl: (m) => void controls.push(m.type),
          close: async () => {
            closed = true
          },
        }
      },
    })
    expect(assembly).toEqual({ name: 'alice', mode: 'acceptEdits', cwd: fx.cwd })
    expect(alice.tools).toEqual(
      expect.arrayContaining(['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep', 'SendMessage', 'TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate']),
    )
    expect(alice.tools).not.toContain('Agent')
    expect(alice.tools).not.toContain('ExitPlanMode')
    expect(alice.model).toBe('claude-sonnet-4-6')

    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'go', env: fx.env })
    await waitFor('the turn', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 1, 10_000, { output: alice.out })
    expect(checked).toEqual(['Glob', 'Bash'])
    expect(toolResults(loopback, 'alice').get('toolu_b')).toEqual({ content: 'Permission to use Bash was denied: no shell today', isError: true })
    await expect(fs.stat(path.join(fx.cwd, 'should-not-exist'))).rejects.toThrow()
    expect(alice.out()).toContain('● waiting — asking about Bash')

    // A signed mode_set_request changes the mode and reaches the layer; an unsigned one does neither.
    await sendTeamMessage({
      team: TEAM,
      to: 'alice',
      text: encodeStructured({ type: 'mode_set_request', mode: 'plan', from: LEAD_NAME }),
      env: fx.env,
    })
    await sendTeamMessage({
      team: TEAM,
      from: 'bob',
      to: 'alice',
      text: encodeStructured({ type: 'mode_set_request', mode: 'bypassPermissions', from: 'bob' }),
      env: fx.env,
    })
    await waitFor('the control messages', () => controls.length === 1 && alice.out().includes('ignored mode_set_request from bob'), 15_000, {
      output: alice.out,
    })
    expect(controls).toEqual(['mode_set_request'])
    expect((await readMemberState(TEAM, 'alice', fx.env))?.mode).toBe('plan')
    expect(alice.out()).toContain('mode set to plan by team-lead')

    await alice.stop()
    expect(closed).toBe(true)
    // The lead message that changed the mode was never shown to the model as text.
    expect(modelRequests(loopback, 'alice').every((r) => !messageText(requestMessages(r).at(-1)).includes('mode_set_request'))).toBe(true)
  })

  it('an unknown agent type or mode, or a non-member, fails before anything runs', async () => {
    await expect(assembleAgent({ team: TEAM, name: 'alice', env: fx.env, agentType: 'Wizard' })).rejects.toThrow(/unknown agent type "Wizard"/)
    await expect(assembleAgent({ team: TEAM, name: 'alice', env: fx.env, mode: 'yolo' })).rejects.toThrow(/unknown permission mode "yolo"/)
    await expect(assembleAgent({ team: TEAM, name: 'mallory', env: fx.env })).rejects.toMatchObject({ exitCode: 3 })
  })
})
