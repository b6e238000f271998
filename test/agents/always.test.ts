import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentReply } from '../../src/loopback-model/agent-script.js'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, type PendingRequest, agentState, agentTeam, hasCli, hookLog, pendingRequests, spawnCliTeammate } from './helpers.js'

/**
 * `swarm perms approve --always` for an agent-CLI teammate's shell command: swarm keeps the rule
 * (`Bash(touch:*)`) and answers the next call it covers itself, while the CLI is only told "once"
 * — it asks again, so that call still reaches swarm (its permission hook runs), and a command the
 * rule does not cover is asked of the lead as before. Real CLIs, loopback model server.
 */
interface AlwaysCase {
  kind: string
  shell(cmd: string): AgentReply
}

const CASES: AlwaysCase[] = [
  { kind: 'opencode', shell: (cmd) => ({ tool: 'bash', args: { command: cmd, description: 'run a shell command' } }) },
  { kind: 'gemini', shell: (cmd) => ({ tool: 'run_shell_command', args: { command: cmd } }) },
]

for (const c of CASES) {
  const name = `${c.kind}-mate`
  describe.skipIf(!hasCli(c.kind))(`${c.kind}: swarm's "always" is swarm's rule; the CLI is told "once"`, () => {
    let t: AgentTeam
    const idle = () => waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 60_000)
    const asks = async () => (await hookLog(t, name)).filter((e) => e.event === 'permission-request').length
    beforeAll(async () => {
      t = await agentTeam({
        rules: [
          { userMatches: 'ALWAYS-FIRST', reply: c.shell('touch always-1.txt') },
          { userMatches: 'ALWAYS-SECOND', reply: c.shell('touch always-2.txt') },
          { userMatches: 'ALWAYS-OTHER', reply: c.shell('mkdir other-dir') },
          { afterTool: true, reply: { text: 'The tool finished.' } },
        ],
      })
      await spawnCliTeammate(t, name, c.kind)
      await idle()
    }, 120_000)
    afterAll(async () => t?.cleanup(), 30_000)

    it('approve --always keeps Bash(touch:*): the next touch is asked by the CLI, allowed by swarm, never pending; mkdir is still asked', async () => {
      await t.swarm(['send', 't', name, 'ALWAYS-FIRST please'])
      const first = await waitFor('the first touch pending', async () => (await pendingRequests(t)).find((p) => p.agent === name), 60_000)
      expect(JSON.stringify(first.input)).toContain('touch always-1.txt')
      expect(JSON.stringify(first.suggestions)).toContain('touch:*')
      const approved = await t.swarm(['perms', 'approve', 't', first.id, '--always'])
      expect(approved.code, approved.stderr).toBe(0)
      await waitFor('always-1.txt', () => fs.existsSync(path.join(t.work, 'always-1.txt')), 60_000)
      await idle()
      const rules = JSON.parse(fs.readFileSync(path.join(t.home, 'teams', 't', 'agents', name, 'always-rules.json'), 'utf8'))
      // Sealed by team-lead (trust/record-seal.ts): a teammate cannot plant a rule of its own.
      expect(rules).toEqual({ allow: ['Bash(touch:*)'], leadSeal: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/) })
      const asksBefore = await asks()

      // Covered by the kept rule: it runs with no request on file, yet the CLI asked swarm again.
      const seenPending: PendingRequest[] = []
      await t.swarm(['send', 't', name, 'ALWAYS-SECOND please'])
      await waitFor(
        'always-2.txt, with no request pending',
        async () => {
          seenPending.push(...(await pendingRequests(t)))
          return fs.existsSync(path.join(t.work, 'always-2.txt'))
        },
        60_000,
        { intervalMs: 50, output: () => JSON.stringify(seenPending) },
      )
      await idle()
      expect(seenPending).toEqual([])
      expect(await asks()).toBe(asksBefore + 1)

      // Not covered: asked of the lead as before; denied, it does not run.
      await t.swarm(['send', 't', name, 'ALWAYS-OTHER please'])
      const other = await waitFor('mkdir pending', async () => (await pendingRequests(t)).find((p) => p.agent === name), 60_000)
      expect(JSON.stringify(other.input)).toContain('mkdir other-dir')
      expect((await t.swarm(['perms', 'deny', 't', other.id, '--feedback', 'no directories'])).code).toBe(0)
      await idle()
      expect(fs.existsSync(path.join(t.work, 'other-dir'))).toBe(false)
    }, 240_000)
  })
}
