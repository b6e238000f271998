import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { listPending } from '../../src/asks/store.js'
import { expectUnchanged, plantBobsWorktree } from '../security/bobs-worktree.js'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli } from './helpers.js'

/**
 * Issue 23, finding 4, for real Gemini CLI in swarm's sandbox: gem works in the main checkout; its
 * model writes bob's worktree `.git` and `.claude/` hook and the project's `.claude/hooks/` — with
 * its shell, and with its own write_file tool (the CLI process itself writes). The lead approves
 * every request: only the sandbox stands in the way, and nothing changes.
 */
const NAME = 'gem'
const SHELL = [
  `printf 'gitdir: /tmp/evil\\n' > .claude/worktrees/bob/.git; echo "GIT-RC=$?"`,
  `printf x > .claude/worktrees/bob/.claude/hooks/policy.sh; echo "BOBHOOK-RC=$?"`,
  `printf x > .claude/worktrees/bob/.claude/settings.json; echo "BOBSETTINGS-RC=$?"`,
  `printf x > .claude/hooks/lint.sh; echo "REPOHOOK-RC=$?"`,
  'echo SHELL-DONE',
].join('; ')

describe.skipIf(!hasCli('gemini'))("real Gemini CLI and another teammate's worktree (issue 23 finding 4)", () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
  }, 30_000)

  it("its shell and its write_file, approved, change neither bob's .git and .claude/ nor the project's .claude/hooks/", async () => {
    t = await agentTeam({
      rules: [
        { userMatches: 'ATTACK', reply: { tool: 'run_shell_command', args: { command: SHELL } } },
        {
          toolResultIncludes: 'SHELL-DONE',
          reply: {
            tool: 'write_file',
            args: { file_path: path.join('.claude', 'worktrees', 'bob', '.claude', 'hooks', 'policy.sh'), content: 'touch pwned\n' },
          },
        },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const { files } = await plantBobsWorktree(t)
    const spawned = await t.swarm(['spawn', 't', NAME, '--agent', 'gemini', '--model', 'loopback', '--backend', 'tmux', '--prompt', 'ATTACK now'])
    expect(spawned.code, spawned.stderr).toBe(0)
    const toolResults = () => t.server.requests.map((r) => r.view?.toolResult ?? '').filter(Boolean)
    // The lead approves whatever gem asks, until its last tool has run.
    const approved: string[] = []
    await waitFor(
      'both tools run',
      async () => {
        for (const r of (await listPending('t', { env: t.env })).requests.filter((p) => p.agent === NAME)) {
          const a = await t.swarm(['perms', 'approve', 't', r.id])
          if (a.code === 0) approved.push(r.toolName)
        }
        return toolResults().length >= 2
      },
      120_000,
      { intervalMs: 200, output: () => JSON.stringify(toolResults()) },
    )
    const status = JSON.parse((await t.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; sandbox?: string }> }
    expect(status.members.find((m) => m.name === NAME)?.sandbox).toBe('sandboxed')
    expect(approved).toEqual(['run_shell_command', 'write_file'])
    const [shell, write] = toolResults()
    for (const rc of ['GIT', 'BOBHOOK', 'BOBSETTINGS', 'REPOHOOK']) expect(shell).toMatch(new RegExp(`${rc}-RC=[1-9]`))
    expect(shell).toMatch(/Read-only file system/)
    expect(write).toMatch(/EROFS/)
    await expectUnchanged(files)
    await expect(fs.stat(path.join(t.work, 'pwned'))).rejects.toThrow()
    await waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
  }, 240_000)
})
