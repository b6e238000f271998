import fs from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { cachedShare } from '../../../src/agent/pricing.js'
import { readMemberState } from '../../../src/store/member-state.js'
import type { LoopbackServer, RecordedRequest } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { TEAM, makeFixture, modelRequests, startAgent, type Fixture } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }]), onReady: (t) => ({ loopback, fx } = t) })
// A big file: every tool result pushes the conversation well past the 1,024-token minimum.
beforeEach(() => fs.writeFile(path.join(fx.cwd, 'big.txt'), 'lorem ipsum dolor sit amet\n'.repeat(800)))

const read = (id: string) => ({ content: [{ type: 'tool_use' as const, id, name: 'Read', input: { file_path: 'big.txt' } }] })

/** Two user turns of three model calls each. */
function twoTurnScenario() {
  loopback.setScenario({
    agents: {
      alice: [
        { ...read('toolu_1'), when: { lastUserIncludes: 'first job' } },
        read('toolu_2'),
        { text: 'first done' },
        { ...read('toolu_3'), when: { lastUserIncludes: 'second job' } },
        read('toolu_4'),
        { text: 'second done' },
      ],
    },
  })
}

async function runTwoTurns(): Promise<RecordedRequest[]> {
  await startAgent(fx, 'alice')
  await sendTeamMessage({ team: TEAM, to: 'alice', text: 'first job', env: fx.env })
  await waitFor(
    'the first turn',
    // Idle with the turn's spend on disk: a short turn's `working` is never written alone (agent/state.ts).
    () => modelRequests(loopback, 'alice').length === 3 && readMemberState(TEAM, 'alice', fx.env).then((s) => s?.status === 'idle' && s.turns === 3),
  )
  await sendTeamMessage({ team: TEAM, to: 'alice', text: 'second job', env: fx.env })
  await waitFor(
    'the second turn',
    () => modelRequests(loopback, 'alice').length === 6 && readMemberState(TEAM, 'alice', fx.env).then((s) => s?.status === 'idle' && s.turns === 6),
  )
  return modelRequests(loopback, 'alice')
}

type Body = {
  system: Array<Record<string, unknown>>
  tools: unknown[]
  messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>
}
const bodyOf = (r: RecordedRequest) => r.body as Body
const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === 'cache_control' ? undefined : x)))
const asBlocks = (m: Body['messages'][number]) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content)
function breakpoints(b: Body): Array<Record<string, unknown>> {
  const all = [...(b.tools as Array<Record<string, unknown>>), ...b.system, ...b.messages.flatMap(asBlocks)]
  return all.flatMap((x) => (x.cache_control ? [x.cache_control as Record<string, unknown>] : []))
}

describe('prompt caching in the runtime, on the raw request bodies', () => {
  it('sends a byte-stable prefix with ≤ 4 breakpoints, and the honest loopback then reports mostly cache reads', async () => {
    twoTurnScenario()
    const requests = await runTwoTurns()
    const bodies = requests.map(bodyOf)
    for (const b of bodies) {
      const marks = breakpoints(b)
      expect(marks.length).toBeGreaterThanOrEqual(2)
      expect(marks.length).toBeLessThanOrEqual(4)
      expect(marks.every((m) => m.type === 'ephemeral' && m.ttl === undefined)).toBe(true)
      // The static system part carries the breakpoint; the member list follows it, unmarked.
      expect(b.system[0]!.cache_control).toBeDefined()
      expect(b.system[1]).toMatchObject({ type: 'text', text: expect.stringContaining('Members:') })
      expect(b.system[1]!.cache_control).toBeUndefined()
      // The last message's last block is marked.
      expect(asBlocks(b.messages[b.messages.length - 1]!).at(-1)!.cache_control).toBeDefined()
    }
    // Tools and the static system prompt are the same bytes on every request; each request's
    // messages start with exactly the previous request's messages.
    for (let i = 1; i < bodies.length; i++) {
      expect(JSON.stringify(bodies[i]!.tools)).toBe(JSON.stringify(bodies[0]!.tools))
      expect(JSON.stringify(bodies[i]!.system[0])).toBe(JSON.stringify(bodies[0]!.system[0]))
      const previous = strip(bodies[i - 1]!.messages.map((m) => ({ role: m.role, content: asBlocks(m) })))
      const current = strip(bodies[i]!.messages.map((m) => ({ role: m.role, content: asBlocks(m) }))) as unknown[]
      expect(current.slice(0, (previous as unknown[]).length)).toEqual(previous)
    }
    // Every request after the first reads all it sent before from the cache.
    for (let i = 1; i < requests.length; i++) {
      expect(requests[i]!.usage!.cache_read_input_tokens).toBe(requests[i - 1]!.promptTokens! - (requests[i - 1]!.usage!.input_tokens ?? 0))
    }
    const state = await readMemberState(TEAM, 'alice', fx.env)
    expect(state!.usage!.cacheReadTokens).toBeGreaterThan(0)
    expect(cachedShare(state!.usage!)).toBeGreaterThan(0.5)
  })

  it('uses promptCacheTtl 1h from the settings and writes the 1-hour cache (priced 2×)', async () => {
    await fs.mkdir(path.join(fx.cwd, '.claude'), { recursive: true })
    await fs.writeFile(path.join(fx.cwd, '.claude', 'settings.json'), JSON.stringify({ promptCacheTtl: '1h' }))
    twoTurnScenario()
    const requests = await runTwoTurns()
    for (const r of requests) expect(breakpoints(bodyOf(r)).every((m) => m.ttl === '1h')).toBe(true)
    const state = await readMemberState(TEAM, 'alice', fx.env)
    expect(state!.usage!.cacheWrite1hTokens).toBe(state!.usage!.cacheWriteTokens)
  })

  it('DISABLE_PROMPT_CACHING=1 sends no cache_control, and every token is plain input', async () => {
    fx.env.DISABLE_PROMPT_CACHING = '1'
    twoTurnScenario()
    const requests = await runTwoTurns()
    for (const r of requests) {
      expect(breakpoints(bodyOf(r))).toEqual([])
      expect(r.usage!.cache_read_input_tokens).toBe(0)
    }
    const state = await readMemberState(TEAM, 'alice', fx.env)
    expect(state!.usage!.cacheReadTokens).toBe(0)
  })
})
