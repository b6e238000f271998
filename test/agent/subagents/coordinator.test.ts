import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { scratchpadDir, LEAD_NAME } from '../../../src/home/paths.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { allowInScratchpad } from '../../../src/agent/subagents/scratchpad.js'
import { allTools } from '../../../src/agent/tool-registry.js'
import type { PermissionCheck, ToolContext } from '../../../src/agent/tool.js'
import { TEAM, makeFixture, modelRequests, type Fixture } from '../runtime/helpers.js'
import { COORDINATOR_TOOLS, leadTurnInputs, recordingClient, startLead, type Lead } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
let lead: Lead | undefined
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

const systemOf = (body: unknown): string => {
  const system = (body as { system: string | Array<{ text: string }> }).system
  return typeof system === 'string' ? system : system.map((b) => b.text).join('\n')
}
const agent = (input: Record<string, unknown>) => ({ type: 'tool_use' as const, name: 'Agent', input })
const write = (file: string, content: string) => ({ type: 'tool_use' as const, name: 'Write', input: { file_path: file, content } })

const IMPLEMENTATION = [
  agent({ description: 'fix a, part 1', prompt: 'In src/a.ts replace line 1 with "export const a = 1".', files: ['src/a.ts'] }),
  agent({ description: 'fix a, part 2', prompt: 'In src/a.ts add line 2 "export const a2 = 2".', files: ['src/a.ts'] }),
  agent({ description: 'fix b', prompt: 'In src/b.ts write "export const b = 1".', files: ['src/b.ts'] }),
  agent({ description: 'fix c', prompt: 'In src/c.ts write "export const c = 1".', files: ['src/c.ts'] }),
]

/**
 * An implementation worker: one write (answered after `ms`), then its report. Parallel workers
 * show as overlapping runs, so `ms` must outlast how late a loaded machine starts the next one.
 */
const worker = (files: string[], marker: string, ms = 1_500) => [
  { delayMs: ms, content: files.map((f) => write(f, `// ${marker}\n`)) },
  { text: `${marker} done.` },
]

describe('coordinator mode', () => {
  it('runs the four phases: parallel research, the coordinator’s synthesis, implementation serialised on overlapping files and parallel on disjoint ones, verification with a verdict', async () => {
    loopback.setScenario({
      agents: {
        [LEAD_NAME]: {
          rules: [
            { when: { toolResultIncludes: 'Started subagent' }, text: 'Waiting for the workers.' },
            {
              when: { lastUserIncludes: 'refactor' },
              times: 1,
              label: 'research',
              content: [
                agent({
                  description: 'map callers',
                  prompt: 'Find every caller of a() and b(); write them to the scratchpad.',
                  subagent_type: 'Explore',
                }),
                agent({ description: 'find tests', prompt: 'Find the tests of a and b.', subagent_type: 'Explore' }),
              ],
            },
            // Synthesis: once both findings are in (in one turn or in two).
            {
              when: { lastUserMatches: '/RESEARCH-A[\\s\\S]*RESEARCH-B|RESEARCH-B[\\s\\S]*RESEARCH-A/' },
              times: 1,
              label: 'synthesis',
              content: IMPLEMENTATION,
            },
            { when: { lastUserIncludes: 'RESEARCH-' }, times: 1, text: 'One finding in; waiting for the other.' },
            { when: { lastUserIncludes: 'RESEARCH-' }, times: 1, label: 'synthesis', content: IMPLEMENTATION },
            {
              when: { lastUserIncludes: 'IMPL-A2 done' },
              times: 1,
              label: 'verification',
              content: [
                agent({
                  description: 'verify a b c',
                  prompt: 'Run the tests of src/a.ts, src/b.ts, src/c.ts and try the exports.',
                  subagent_type: 'Verification',
                }),
              ],
            },
            { when: { lastUserIncludes: '<verdict>PASS</verdict>' }, text: 'Done: a, b and c changed; the verifier says PASS.' },
          ],
          steps: [],
        },
        'team-lead/Explore-1': [{ delayMs: 1_500, text: 'RESEARCH-A: a() is called in src/a.ts:1 and src/b.ts:3.' }],
        'team-lead/Explore-2': [{ delayMs: 1_500, text: 'RESEARCH-B: tests in test/abc.test.ts.' }],
        'team-lead/general-purpose-3': worker(['src/a.ts'], 'IMPL-A1'),
        'team-lead/general-purpose-4': worker(['src/a.ts'], 'IMPL-A2'),
        'team-lead/general-purpose-5': worker(['src/b.ts'], 'IMPL-B'),
        'team-lead/general-purpose-6': worker(['src/c.ts', 'src/d.ts'], 'IMPL-C'),
        'team-lead/Verification-7': [{ text: 'Ran node -e on each export: all load.\nVERDICT: PASS' }],
      },
      fallback: { text: 'Noted.' },
    })
    await fs.mkdir(path.join(fx.cwd, 'src'))
    lead = await startLead(fx, recordingClient(loopback).client, { coordinator: true })
    lead.agent.runtime.say('refactor a, b and c')
    await waitFor('the coordinator’s final report', () => lead!.agent.out().includes('the verifier says PASS'), 30_000, {
      output: () => lead!.agent.out(),
    })

    // The coordinator only delegates, and its prompt teaches the phases.
    const [first] = modelRequests(loopback, LEAD_NAME)
    const body = first!.body as { tools: Array<{ name: string }>; system: string | Array<{ text: string }> }
    expect(body.tools.map((t) => t.name).sort()).toEqual(COORDINATOR_TOOLS)
    const system = systemOf(body)
    for (const phase of ['1. Research', '2. Synthesis', '3. Implementation', '4. Verification']) expect(system).toContain(phase)
    expect(system).toContain(`Scratchpad directory: ${scratchpadDir(TEAM, fx.env)}`)
    expect(system).not.toContain('use the tools available to complete the task')

    const span = (agentName: string) => {
      const rs = modelRequests(loopback, agentName)
      expect(rs.length, agentName).toBeGreaterThan(0)
      return { start: rs[0]!.receivedAt, answered: rs[0]!.answeredAt!, last: rs.at(-1)!.receivedAt }
    }
    // Research: both workers asked the model before either had its answer (held 1.5 s each).
    const [r1, r2] = [span('team-lead/Explore-1'), span('team-lead/Explore-2')]
    expect(r2.start).toBeLessThan(r1.answered)
    expect(r1.start).toBeLessThan(r2.answered)
    // Implementation: the two on src/a.ts one after the other, in the order started…
    const [a1, a2, b, c] = [
      'team-lead/general-purpose-3',
      'team-lead/general-purpose-4',
      'team-lead/general-purpose-5',
      'team-lead/general-purpose-6',
    ].map(span)
    expect(a2!.start).toBeGreaterThanOrEqual(a1!.last)
    // …the disjoint ones at once, alongside the first.
    expect(b!.start).toBeLessThan(a1!.last)
    expect(c!.start).toBeLessThan(b!.last)
    expect(c!.start).toBeLessThan(a1!.last)
    expect(await fs.readFile(path.join(fx.cwd, 'src/a.ts'), 'utf8')).toBe('// IMPL-A2\n')

    // Every worker knows the scratchpad; results came back as task notifications with the file check and the verdict.
    for (const r of modelRequests(loopback).filter((q) => q.headers['x-swarm-agent']?.startsWith('team-lead/'))) {
      expect(systemOf(r.body)).toContain(`Shared scratchpad directory: ${scratchpadDir(TEAM, fx.env)}`)
    }
    const notes = leadTurnInputs(loopback)
      .filter((t) => t.includes('<task-notification>'))
      .join('\n')
    expect(notes).toContain('<file-check>changed only declared files: src/a.ts</file-check>')
    expect(notes).toContain('<file-check>changed only declared files: src/b.ts</file-check>')
    expect(notes).toContain('<file-check>changed files it did not declare: src/d.ts (declared: src/c.ts)</file-check>')
    expect(notes).toContain('<verdict>PASS</verdict>')
    expect(notes.match(/<status>completed<\/status>/g)).toHaveLength(7)
  }, 60_000)

  it('the scratchpad is writable without asking; everything else still goes to the permission check', async () => {
    const dir = scratchpadDir(TEAM, fx.env)
    const denyAll: PermissionCheck = () => ({ behavior: 'deny', message: 'nobody to ask' })
    const check = allowInScratchpad(denyAll, dir)
    const writeTool = allTools().find((t) => t.name === 'Write')!
    const ctx = { cwd: fx.cwd, env: fx.env } as ToolContext
    expect(await check(writeTool, { file_path: path.join(dir, 'notes.md'), content: 'x' }, ctx)).toEqual({ behavior: 'allow' })
    expect((await check(writeTool, { file_path: path.join(fx.cwd, 'notes.md'), content: 'x' }, ctx)).behavior).toBe('deny')
    expect((await check(writeTool, { file_path: path.join(dir, '..', 'other', 'x.md'), content: 'x' }, ctx)).behavior).toBe('deny')
  })
})
