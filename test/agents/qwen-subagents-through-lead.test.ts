import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli, pendingRequests, spawnCliTeammate } from './helpers.js'

/**
 * Qwen Code's other ways to act: its `agent` tool (a subagent whose own turn calls the shell) and
 * `enter_worktree` (it runs git itself to make `.qwen/worktrees/<slug>`, allowed without a prompt).
 * A subagent's shell call must reach the lead like a top-level one; the worktree must not be made
 * (the project's `.qwen/` is read-only in swarm's sandbox).
 */
const NAME = 'qwen-mate'
const seen = (t: AgentTeam) =>
  JSON.stringify(t.server.requests.filter((r) => !r.aux).map((r) => r.view?.toolResult?.slice(0, 200) ?? r.view?.lastUser?.slice(0, 80)))

describe.skipIf(!hasCli('qwen'))('Qwen Code: subagents and enter_worktree do not get around the lead (real CLI)', () => {
  let t: AgentTeam
  const idle = () => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 90_000, { output: () => seen(t) })
  beforeAll(async () => {
    t = await agentTeam({
      rules: [
        {
          userMatches: 'DELEGATE',
          reply: { tool: 'agent', args: { description: 'run it', prompt: 'INNER run the command', subagent_type: 'general-purpose' } },
        },
        { userMatches: 'INNER', reply: { tool: 'run_shell_command', args: { command: 'touch sub-denied.txt' } } },
        { userMatches: 'WORKTREE', reply: { tool: 'enter_worktree', args: { name: 'escape' } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    fs.writeFileSync(path.join(t.work, 'README'), 'x\n')
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: t.work, env: t.env })
    git('init', '-q')
    git('add', '.')
    git('commit', '-qm', 'init')
    await spawnCliTeammate(t, NAME, 'qwen')
    await idle()
  }, 120_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it("a subagent's run_shell_command is asked of the lead; denied, it does not run", async () => {
    await t.swarm(['send', 't', NAME, 'DELEGATE now'])
    // The agent tool itself is asked: approved, the subagent's turn runs.
    const delegation = await waitFor(
      'the agent call pending',
      async () => (await pendingRequests(t)).find((p) => JSON.stringify(p.input).includes('INNER')),
      90_000,
    )
    expect((await t.swarm(['perms', 'approve', 't', delegation.id])).code).toBe(0)
    const asked = await waitFor(
      'the subagent touch pending, or run',
      async () =>
        (await pendingRequests(t)).find((p) => JSON.stringify(p.input).includes('touch sub-denied.txt')) ??
        (fs.existsSync(path.join(t.work, 'sub-denied.txt')) ? ('ran' as const) : undefined),
      90_000,
      { output: () => seen(t) },
    )
    expect(asked, seen(t)).not.toBe('ran')
    if (asked === 'ran') return
    expect((await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'no'])).code).toBe(0)
    await idle()
    expect(fs.existsSync(path.join(t.work, 'sub-denied.txt'))).toBe(false)
  }, 180_000)

  it('enter_worktree makes no worktree', async () => {
    const before = t.server.requests.length
    await t.swarm(['send', 't', NAME, 'WORKTREE now'])
    await waitFor('its result', () => t.server.requests.slice(before).some((r) => r.view?.toolResult), 90_000, { output: () => seen(t) })
    await idle()
    expect(fs.existsSync(path.join(t.work, '.qwen', 'worktrees', 'escape')), seen(t)).toBe(false)
  }, 120_000)
})
