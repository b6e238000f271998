import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli, pendingRequests, spawnCliTeammate } from './helpers.js'

/**
 * Adversarial review (2), with a real Gemini CLI: after `touch` is approved with --always
 * (`Bash(touch:*)`), a shell call that bash reads as a touch and then a hidden `mkdir` (a comment
 * holding a quote hid the next line from swarm's rules) is asked of the lead, and denied it does not run.
 */
const name = 'gemini-mate'
const HIDDEN = "touch hidden-1.txt #'\nmkdir pwned-dir #'"

describe.skipIf(!hasCli('gemini'))('gemini: a kept Bash(touch:*) does not answer a touch hiding another command', () => {
  let t: AgentTeam
  const idle = () => waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 60_000)
  beforeAll(async () => {
    t = await agentTeam({
      rules: [
        { userMatches: 'ALWAYS-FIRST', reply: { tool: 'run_shell_command', args: { command: 'touch always-1.txt' } } },
        { userMatches: 'ALWAYS-HIDDEN', reply: { tool: 'run_shell_command', args: { command: HIDDEN } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    await spawnCliTeammate(t, name, 'gemini')
    await idle()
  }, 120_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it('the hidden command is pending for the lead, and denied it does not run', async () => {
    await t.swarm(['send', 't', name, 'ALWAYS-FIRST please'])
    const first = await waitFor('the first touch pending', async () => (await pendingRequests(t)).find((p) => p.agent === name), 60_000)
    expect((await t.swarm(['perms', 'approve', 't', first.id, '--always'])).code).toBe(0)
    await waitFor('always-1.txt', () => fs.existsSync(path.join(t.work, 'always-1.txt')), 60_000)
    await idle()

    await t.swarm(['send', 't', name, 'ALWAYS-HIDDEN please'])
    const hidden = await waitFor(
      'the hidden mkdir pending (or run unasked)',
      async () => (await pendingRequests(t)).find((p) => p.agent === name) ?? (fs.existsSync(path.join(t.work, 'pwned-dir')) ? 'ran' : undefined),
      60_000,
    )
    expect(hidden).not.toBe('ran')
    if (hidden === 'ran') return
    expect(JSON.stringify(hidden.input)).toContain('mkdir pwned-dir')
    expect((await t.swarm(['perms', 'deny', 't', hidden.id])).code).toBe(0)
    await idle()
    expect(fs.existsSync(path.join(t.work, 'pwned-dir'))).toBe(false)
  }, 240_000)
})
