import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { BatchReport } from '../../src/batch/run.js'
import { LEAD_NAME } from '../../src/home/paths.js'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'
import { readMemberState } from '../../src/store/member-state.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { ALL_MODES } from './sandbox-helpers.js'

/**
 * Issue 23 finding 8, for batch workers: `swarm batch` on a team with `--team-max-cost` spent
 * without limit, its usage recorded nowhere the team budget sums. Now every subtask's request is
 * added to team-lead's state.json (the lead runs the batch) and checked before it is sent.
 */

const NAMES = ['a1', 'a2', 'a3', 'a4', 'a5']
const CALLS = 40
const LIMIT = 0.05

function scenario(): ScenarioInput {
  const agents: NonNullable<ScenarioInput['agents']> = {}
  const read = (n: number) => ({ content: [{ type: 'tool_use' as const, id: `toolu_${n}`, name: 'Read', input: { file_path: 'big.txt' } }] })
  for (const name of NAMES) agents[`team-lead/batch-${name}`] = [...Array.from({ length: CALLS }, (_, i) => read(i)), { text: 'RESULT: read' }]
  return { agents }
}

/** Every batch mode, bwrap present and absent: metering comes before any permission or sandbox decision. */
describe.each(ALL_MODES)('a team budget counts batch workers (%s)', (mode) => {
  let sb: Sandbox
  let server: LoopbackServer
  beforeEach(async () => {
    server = await startLoopbackServer({ scenario: scenario() })
    sb = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url })
  })
  afterEach(async () => {
    await sb?.cleanup()
    await server?.close()
  })

  it.each(['bwrap present', 'bwrap absent'] as const)(
    '%s: swarm batch stops its subtasks at --team-max-cost, before the request, and records their spend',
    async (bwrap) => {
      const git = (...args: string[]) => execa('git', args, { cwd: sb.project, env: sb.env })
      await git('init', '-q', '-b', 'main')
      await fs.mkdir(path.join(sb.project, '.claude'), { recursive: true })
      await fs.writeFile(
        path.join(sb.project, '.claude', 'settings.json'),
        JSON.stringify({ sandbox: bwrap === 'bwrap absent' ? { bwrapPath: '/nonexistent/bwrap' } : {} }),
      )
      await fs.writeFile(path.join(sb.project, 'big.txt'), 'lorem ipsum dolor sit amet, consectetur\n'.repeat(250))
      await git('add', '.')
      await git('commit', '-qm', 'start')
      const created = await sb.swarm(['team', 'create', 'bb', '--no-start', '--cwd', sb.project, '--team-max-cost', String(LIMIT)])
      expect(created.code, created.stderr).toBe(0)
      const file = path.join(sb.root, 'tasks.yaml')
      await fs.writeFile(file, `tasks:\n${NAMES.map((n) => `  - { name: ${n}, prompt: read big.txt }\n`).join('')}`)
      const r = await sb.swarm(['batch', 'bb', '--from', file, '--mode', mode, '--parallel', '1', '--json'], { timeout: 120_000 })
      const report = JSON.parse(r.stdout) as BatchReport
      const served = server.requests.filter((q) => q.path === '/v1/messages').length
      expect(served).toBeLessThan(CALLS)
      expect(report.failed).toBe(NAMES.length)
      expect(report.subtasks[0]!.result).toMatch(/^budget_exhausted: team-lead spent \$[\d.]+ of \$0\.0500 \(the team's budget\)$/)
      // The later subtasks send nothing: the budget is spent before their first request.
      expect(report.subtasks.slice(1).every((s) => s.tokens === 0)).toBe(true)
      const state = await readMemberState('bb', LEAD_NAME, sb.env)
      expect(state?.costUsd).toBeGreaterThanOrEqual(LIMIT)
      expect(state?.status).toBe('exited')
    },
    150_000,
  )
})
