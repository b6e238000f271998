import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readMemberState } from '../../src/store/member-state.js'
import { leadKeyPath } from '../../src/trust/keys.js'
import { TEAM, makeFixture, nudge, startInProcess, toolResult, type Fixture } from '../permissions/requests/bubbling-helpers.js'
import { useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import { ALL_MODES, pathWithoutBwrap } from './sandbox-helpers.js'

/**
 * Issue 23 finding 6: compaction restored every file the conversation had named in a Read —
 * denied ones included — with a plain fs.readFile. Now it restores only reads that succeeded,
 * re-checked through the Read tool's guard: neither the lead key nor a `Read(~/.ssh/**)` file comes back.
 */

const PEM = 'BEGIN PRIVATE KEY'
const SSH = 'SSH-SECRET-7f3a'
const SUMMARY_CUE = 'Your conversation is about to be compacted'
let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: makeFixture, onReady: (t) => ({ loopback, fx } = t) })

/** The matrix (issue 23): every mode, bwrap present and absent (the guard is the Read tool's, not the sandbox's). */
describe.each(['bwrap present', 'bwrap absent'] as const)('compaction restores only what the Read guard lets through now (%s)', (variant) => {
  for (const mode of ALL_MODES) {
    it(`${mode}: after a denied Read of lead.key and of ~/.ssh (a deny rule), no later request carries either`, async () => {
      const home = path.dirname(fx.home)
      if (variant === 'bwrap absent') fx.env.PATH = pathWithoutBwrap(path.join(fx.base, 'nobwrap'))
      fx.env.HOME = home
      await fs.mkdir(path.join(home, '.ssh'), { recursive: true })
      await fs.writeFile(path.join(home, '.ssh', 'id_test'), `${SSH}\n`)
      await fs.writeFile(path.join(fx.cwd, 'notes.txt'), 'plain notes\n')
      await fs.mkdir(path.join(fx.cwd, '.claude'), { recursive: true })
      await fs.writeFile(path.join(fx.cwd, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(~/.ssh/**)'] } }))
      const reads = [
        { type: 'tool_use' as const, id: 'r_key', name: 'Read', input: { file_path: leadKeyPath(TEAM, fx.env) } },
        { type: 'tool_use' as const, id: 'r_ssh', name: 'Read', input: { file_path: '~/.ssh/id_test' } },
        { type: 'tool_use' as const, id: 'r_notes', name: 'Read', input: { file_path: 'notes.txt' } },
      ]
      loopback.setScenario({
        agents: {
          alice: {
            rules: [{ when: { lastUserIncludes: SUMMARY_CUE }, text: '<summary>Read three files.</summary>' }],
            steps: [{ when: { lastUserIncludes: 'read them' }, content: reads }, { text: 'read' }],
          },
        },
        fallback: { text: 'ok' },
      })
      const { runtime, pane } = await startInProcess(fx, { mode })
      await nudge(fx, 'read them')
      await waitFor('the reads answered', () => reads.every((r) => toolResult(loopback, r.id) !== undefined), 15_000, { output: pane })
      expect(toolResult(loopback, 'r_key')!.isError).toBe(true)
      expect(toolResult(loopback, 'r_ssh')!.isError).toBe(true)
      await waitFor('alice idle', async () => (await readMemberState(TEAM, 'alice', fx.env))?.status === 'idle', 10_000, { output: pane })

      runtime.compact()
      await nudge(fx, 'after compaction')
      const bodies = () => loopback.requests.map((r) => JSON.stringify(r.body ?? {}))
      await waitFor(
        'the request after compaction',
        () => bodies().some((b) => b.includes('Recently read file') && b.includes('after compaction')),
        15_000,
        {
          output: pane,
        },
      )
      const after = bodies().find((b) => b.includes('Recently read file') && b.includes('after compaction'))!
      expect(after).toContain('plain notes') // the read that succeeded is restored
      for (const b of bodies()) {
        expect(b).not.toContain(PEM)
        expect(b).not.toContain(SSH)
      }
    })
  }
})
