import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { FORK_PLACEHOLDER } from '../../../src/agent/subagents/fork.js'
import { LEAD_NAME } from '../../../src/home/paths.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { makeFixture, modelRequests, requestMessages, toolResults, type Fixture } from '../runtime/helpers.js'
import { leadTurnInputs, recordingClient, startLead, type Lead } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
let lead: Lead | undefined
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

const fork = (description: string, prompt: string) => ({ type: 'tool_use' as const, name: 'Agent', input: { description, prompt } })

/** Where the `messages` array of a raw request body ends (its closing bracket), and what follows it. */
function splitAtTools(raw: string): { messages: string; tail: string } {
  const at = raw.lastIndexOf(',"tools":[')
  expect(at).toBeGreaterThan(0)
  return { messages: raw.slice(0, at), tail: raw.slice(at) }
}

describe('fork subagents', () => {
  it('a fork’s first request repeats the parent’s last request byte for byte, then placeholders and its directive; the prefix is a cache read; a fork cannot fork', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [
          { when: { lastUserIncludes: 'survey' }, content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.md' } }] },
          {
            content: [
              { type: 'text', text: 'Two forks.' },
              fork('check part one', 'Check part one of the notes.'),
              fork('check part two', 'Check part two of the notes.'),
            ],
          },
          { text: 'Forks running.' },
        ],
        'team-lead/fork-1': [{ content: [fork('deeper', 'Fork again.')] }, { text: 'Part one is fine (could not fork).' }],
        'team-lead/fork-2': [{ text: 'Part two is fine.' }],
      },
      fallback: { text: 'Noted.' },
    })
    fx.env.SWARM_FORK_SUBAGENT = '1'
    await fs.writeFile(
      path.join(fx.cwd, 'notes.md'),
      Array.from({ length: 400 }, (_, i) => `line ${i}: the notes of the survey, part ${i < 200 ? 'one' : 'two'}`).join('\n'),
    )
    const { client, raw } = recordingClient(loopback)
    lead = await startLead(fx, client)
    lead.agent.runtime.say('survey the notes')
    await waitFor(
      'both fork notifications',
      () =>
        leadTurnInputs(loopback).filter((t) => t.includes('<task-notification>')).length === 2 ||
        leadTurnInputs(loopback).some((t) => (t.match(/<task-notification>/g) ?? []).length === 2),
      20_000,
      { output: () => lead!.agent.out() },
    )

    // The parent's last request before the forks: the one answered with the two Agent calls.
    const parentRaw = raw.of(LEAD_NAME)[1]!
    const parent = splitAtTools(parentRaw)
    for (const agent of ['team-lead/fork-1', 'team-lead/fork-2']) {
      const forkRaw = raw.of(agent)[0]!
      const child = splitAtTools(forkRaw)
      // model, max_tokens, system and every message of the parent's last request: the same bytes…
      const prefix = parent.messages.slice(0, -1) // without the closing ] of its messages
      expect(child.messages.startsWith(prefix), `${agent} repeats the parent's bytes`).toBe(true)
      expect(child.messages[prefix.length]).toBe(',')
      // …and the same tools (and stream flag) after the messages.
      expect(child.tail).toBe(parent.tail)
    }
    // After the prefix: the parent's Agent turn, then one user message — a placeholder for each call, then the directive.
    const [f1, f2] = [modelRequests(loopback, 'team-lead/fork-1')[0]!, modelRequests(loopback, 'team-lead/fork-2')[0]!]
    const agentTurn = requestMessages(modelRequests(loopback, LEAD_NAME)[2]!).at(-2)!
    const ids = (agentTurn.content as Array<{ type: string; id?: string }>).filter((b) => b.type === 'tool_use').map((b) => b.id)
    for (const [req, directive] of [
      [f1, 'Check part one of the notes.'],
      [f2, 'Check part two of the notes.'],
    ] as const) {
      const msgs = requestMessages(req)
      expect(msgs.at(-2)).toEqual(agentTurn)
      const last = msgs.at(-1)!.content as Array<{ type: string; tool_use_id?: string; content?: string; text?: string }>
      expect(last.slice(0, 2).map((b) => [b.type, b.tool_use_id, b.content])).toEqual(ids.map((id) => ['tool_result', id, FORK_PLACEHOLDER]))
      expect(last[2]!.text).toMatch(/^<fork-boilerplate>[\s\S]*<\/fork-boilerplate>\n\n/)
      expect(last[2]!.text!.endsWith(directive)).toBe(true)
    }
    // The loopback served the parent's whole prompt from its cache to each fork's first request.
    const parentRecord = modelRequests(loopback, LEAD_NAME)[1]!
    for (const req of [f1, f2]) {
      expect(req.usage!.cache_read_input_tokens).toBe(parentRecord.promptTokens)
      expect(req.usage!.input_tokens).toBeLessThan(req.promptTokens! / 5)
    }
    // The fork that tried to fork was refused; both reports came back as notifications.
    const refused = [...toolResults(loopback, 'team-lead/fork-1').values()].find((r) => r.content.startsWith('Not started'))
    expect(refused).toEqual({
      isError: true,
      content: 'Not started: you are a fork, and a fork cannot fork. Do the work yourself and put the result in your report.',
    })
    expect(modelRequests(loopback).some((r) => r.headers['x-swarm-agent'] === 'team-lead/fork-3')).toBe(false)
    const notes = leadTurnInputs(loopback).join('\n')
    expect(notes).toContain('<summary>Agent "check part one" completed</summary>')
    expect(notes).toContain('<result>Part one is fine (could not fork).</result>')
    expect(notes).toContain('<result>Part two is fine.</result>')
    // The forks' tool results to the parent: started in the background, with their task ids.
    expect([...toolResults(loopback, LEAD_NAME).values()].filter((r) => r.content.startsWith('Started fork'))).toHaveLength(2)
  }, 40_000)

  it('without SWARM_FORK_SUBAGENT an Agent call without subagent_type is a fresh general-purpose subagent', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: [{ when: { lastUserIncludes: 'go' }, content: [fork('plain', 'Do it.')] }, { text: 'Done.' }],
        'team-lead/general-purpose-1': [{ text: 'Did it.' }],
      },
    })
    lead = await startLead(fx, recordingClient(loopback).client)
    lead.agent.runtime.say('go')
    await waitFor('the end of the turn', () => lead!.agent.out().includes('Done.'))
    expect([...toolResults(loopback, LEAD_NAME).values()][0]!.content).toBe('Did it.')
    expect(requestMessages(modelRequests(loopback, 'team-lead/general-purpose-1')[0]!)).toHaveLength(1)
  }, 20_000)
})
