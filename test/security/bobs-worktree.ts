import fs from 'node:fs/promises'
import path from 'node:path'
import { expect } from 'vitest'
import type { AgentTeam } from '../agents/helpers.js'
import { GIT_ENV, initRepo } from '../worktrees/git-repo.js'

/**
 * Issue 23, finding 4, for agent-CLI teammates: the main checkout a git repository, bob in a
 * worktree of swarm's at `<repo>/.claude/worktrees/bob` (a command member), his `.claude/`
 * settings and hook and the project's `.claude/hooks/lint.sh` planted. Returns bob's worktree and
 * each file that must stay as it is, with its text.
 */
export async function plantBobsWorktree(t: AgentTeam): Promise<{ bob: string; files: Record<string, string> }> {
  Object.assign(t.env, GIT_ENV)
  initRepo(t.work, t.env)
  const spawned = await t.swarm(['spawn', 't', 'bob', '--worktree', 'bob', '--backend', 'tmux', '--command', 'sleep 600'])
  expect(spawned.code, spawned.stderr).toBe(0)
  const bob = path.join(t.work, '.claude', 'worktrees', 'bob')
  const files: Record<string, string> = {
    [path.join(bob, '.claude', 'settings.json')]: '{}\n',
    [path.join(bob, '.claude', 'hooks', 'policy.sh')]: 'exit 0\n',
    [path.join(t.work, '.claude', 'hooks', 'lint.sh')]: 'exit 0\n',
  }
  for (const [f, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(f), { recursive: true })
    await fs.writeFile(f, text)
  }
  for (const f of [path.join(bob, '.git'), path.join(bob, 'README.md')]) files[f] = await fs.readFile(f, 'utf8')
  return { bob, files }
}

/** Each of `files` still holds its text. */
export async function expectUnchanged(files: Record<string, string>): Promise<void> {
  for (const [f, text] of Object.entries(files)) expect([f, await fs.readFile(f, 'utf8')]).toEqual([f, text])
}
