import { describe, expect, it, onTestFinished } from 'vitest'
import { teamWorktrees } from '../../src/agent/member-sandbox.js'
import { createTeam } from '../../src/teams/team-store.js'
import { writeWorktreeRecord } from '../../src/worktrees/record.js'
import { isolatedHome } from '../support/home.js'

describe('teamWorktrees (what every member sandbox protects by rule)', () => {
  it("lists the roster's cwds and worktrees and the worktree records, read afresh on each call", async () => {
    const iso = isolatedHome('swarm-team-worktrees-')
    onTestFinished(iso.cleanup)
    const repo = iso.project
    const bobWt = `${repo}/.claude/worktrees/t-bob`
    await createTeam({ name: 't', cwd: repo, members: [{ name: 'bob', cwd: bobWt }] }, iso.env)
    expect(new Set(await teamWorktrees('t', iso.env))).toEqual(new Set([repo, bobWt]))
    const carolWt = `${repo}/deep/a/b/c/t-carol`
    await writeWorktreeRecord(
      { team: 't', name: 'carol', slug: 't-carol', repo, path: carolWt, branch: 'swarm/t/carol', baseRef: 'x', subdir: '', links: [], createdAt: 1 },
      iso.env,
    )
    expect(await teamWorktrees('t', iso.env)).toContain(carolWt)
  })
})
