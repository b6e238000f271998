import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { buildSystemPrompt } from '../../src/agent/prompt.js'
import { formatReport } from '../../src/leader/report-format.js'
import { teamReport } from '../../src/leader/team-report.js'
import { createTeam, updateMember } from '../../src/teams/team-store.js'
import { findWorktreeRecord, worktreeNotice } from '../../src/worktrees/notice.js'
import { listTeamWorktrees, pruneWorktrees, teamWorktreesOf, teardownWorktrees } from '../../src/worktrees/team-worktrees.js'
import { createWorktree } from '../../src/worktrees/worktree.js'
import { GIT_ENV, branchExists, commitFile, git, initRepo } from './git-repo.js'
import { isolatedEnv, useTempDir } from '../support/home.js'

let base: string
let repo: string
let env: NodeJS.ProcessEnv

useTempDir('swarm-wt-team-', (d) => {
  base = d
  repo = path.join(base, 'repo')
  env = isolatedEnv(base, { ...GIT_ENV, CLAUDE_CONFIG_DIR: '' })
  initRepo(repo, env)
})

it("lists every worktree of a team with what is in it — also a swarm/<team>/ branch it has no record of — and no other team's", async () => {
  const clean = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  const dirty = await createWorktree({ repoDir: repo, team: 'crew', name: 'bob', env })
  const other = await createWorktree({ repoDir: repo, team: 'other', name: 'alice', env })
  fs.writeFileSync(path.join(dirty.path, 'wip.txt'), 'wip\n')
  git(repo, env, 'branch', 'swarm/crew/ghost') // left by hand, or by an older swarm
  const { worktrees, problems } = await listTeamWorktrees('crew', { env, repoDirs: [repo] })
  expect(problems).toEqual([])
  expect(worktrees.map((w) => [w.name, w.path, w.recorded, w.contents.clean])).toEqual([
    ['alice', clean.path, true, true],
    ['bob', dirty.path, true, false],
    ['ghost', '', false, true],
  ])
  expect(worktrees.map((w) => w.path)).not.toContain(other.path)
})

it('a corrupt record is named as a problem, left where it is, and the rest still listed', async () => {
  await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  const bad = path.join(env.SWARM_HOME!, 'worktrees/crew/zz-bad.json')
  fs.writeFileSync(bad, '{ not json')
  const { worktrees, problems } = await listTeamWorktrees('crew', { env })
  expect(worktrees.map((w) => w.name)).toEqual(['alice'])
  expect(problems).toEqual([expect.stringContaining(bad)])
  expect(fs.readFileSync(bad, 'utf8')).toBe('{ not json')
})

it('teardown removes what holds nothing to lose and keeps the rest; a later team of the same name still sees what was kept; prune removes clean ones', async () => {
  const a = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  const b = await createWorktree({ repoDir: repo, team: 'crew', name: 'bob', env })
  const c = await createWorktree({ repoDir: repo, team: 'crew', name: 'carol', env })
  fs.writeFileSync(path.join(b.path, 'wip.txt'), 'wip\n')
  commitFile(c.path, env, 'c.txt', 'carol did it', 'c\n')
  const first = await teardownWorktrees((await listTeamWorktrees('crew', { env })).worktrees, { env })
  expect(first.removed.map((w) => w.name)).toEqual(['alice'])
  expect(first.kept.map((w) => w.name)).toEqual(['bob', 'carol'])
  expect(fs.existsSync(a.path)).toBe(false)

  // "crew" is deleted and made again: its predecessor's worktrees are still listed.
  const again = await listTeamWorktrees('crew', { env })
  expect(again.worktrees.map((w) => [w.name, w.contents.uncommitted.length, w.contents.unmergedCount])).toEqual([
    ['bob', 1, 0],
    ['carol', 0, 1],
  ])
  fs.rmSync(path.join(b.path, 'wip.txt'))
  const pruned = await pruneWorktrees({ env })
  expect(pruned.removed.map((w) => w.name)).toEqual(['bob'])
  expect(pruned.kept.map((w) => w.name)).toEqual(['carol'])
  expect(branchExists(repo, env, 'swarm/crew/carol')).toBe(true)
})

it('prune leaves alone a clean worktree that a member works in', async () => {
  await createTeam({ name: 'crew', cwd: repo, members: [{ name: 'alice' }] }, env)
  const a = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  await updateMember('crew', 'alice', { cwd: a.path, worktreePath: a.path }, env)
  const b = await createWorktree({ repoDir: repo, team: 'crew', name: 'bob', env })
  const r = await pruneWorktrees({ env, team: 'crew' })
  expect(r.removed.map((w) => w.path)).toEqual([b.path])
  expect(r.inUse.map((w) => [w.path, w.member])).toEqual([[a.path, 'alice']])
  expect(fs.existsSync(a.path)).toBe(true)
})

it("teamWorktreesOf picks a member's worktree (teammate removal)", async () => {
  const a = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  await createWorktree({ repoDir: repo, team: 'crew', name: 'bob', env })
  const member = { agentId: 'alice@crew', name: 'alice', joinedAt: 0, tmuxPaneId: '', cwd: a.path, worktreePath: a.path, subscriptions: [] }
  const { worktrees } = await teamWorktreesOf('crew', { env, members: [member] })
  expect(worktrees.map((w) => w.path)).toEqual([a.path])
})

it("the agent's system prompt says where its worktree is and that main-checkout paths must be translated", async () => {
  const a = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  const rec = await findWorktreeRecord('crew', a.path, env)
  expect(rec?.path).toBe(a.path)
  const notice = worktreeNotice(rec!)
  expect(notice).toContain(`git worktree of your own: ${a.path}, on branch swarm/crew/alice`)
  expect(notice).toContain(`point into the main checkout (${repo}/…)`)
  expect(notice).toContain(`same relative path under ${a.path}/`)
  expect(await findWorktreeRecord('crew', repo, env)).toBeUndefined()
  expect((await findWorktreeRecord('crew', path.join(a.path, 'src'), env))?.path).toBe(a.path)
  expect(
    buildSystemPrompt({ team: 'crew', name: 'alice', members: ['alice'], cwd: a.path, definitionPrompt: `Be good.\n\n${notice}` }).static,
  ).toContain('# Worktree')
})

it('swarm status reports each worktree of the team, also a kept one whose member is gone', async () => {
  await createTeam({ name: 'crew', cwd: repo, members: [{ name: 'alice' }] }, env)
  const a = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  await updateMember('crew', 'alice', { cwd: a.path, worktreePath: a.path }, env)
  const gone = await createWorktree({ repoDir: repo, team: 'crew', name: 'bob', env })
  commitFile(gone.path, env, 'b.txt', 'bob was here', 'b\n')
  const report = await teamReport('crew', { env })
  expect(report.worktrees.map((w) => [w.member, w.name, w.clean, w.unmergedCount])).toEqual([
    ['alice', 'alice', true, 0],
    [null, 'bob', false, 1],
  ])
  const text = formatReport(report)
  expect(text).toContain(`  alice  ${a.path}  swarm/crew/alice  clean`)
  expect(text).toContain(`  bob (kept, no member)  ${gone.path}  swarm/crew/bob  1 unmerged commit`)
})
