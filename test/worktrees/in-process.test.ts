import fs from 'node:fs'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { createExecutor } from '../../src/backends/registry.js'
import type { InProcessExecutor } from '../../src/backends/types.js'
import { LeaderControl } from '../../src/leader/control.js'
import { teamLeadSigner } from '../../src/trust/sign.js'
import { addMember, createTeam, readTeam } from '../../src/teams/team-store.js'
import { listTeamWorktrees, teardownWorktrees } from '../../src/worktrees/team-worktrees.js'
import { GIT_ENV, initRepo } from './git-repo.js'
import { isolatedEnv, useTempDir } from '../support/home.js'

let base: string
let repo: string
let env: NodeJS.ProcessEnv
let inProcess: InProcessExecutor | undefined

useTempDir('swarm-wt-ip-', async (d) => {
  base = d
  repo = path.join(base, 'repo')
  env = isolatedEnv(base, { ...GIT_ENV, CLAUDE_CONFIG_DIR: '' })
  initRepo(repo, env)
  await createTeam({ name: 'crew', cwd: repo }, env)
})
// Registered after useTempDir, so it runs before the directory goes.
afterEach(() => inProcess?.killAll())

it('an in-process teammate spawned with a worktree (explicitly, or by its definition) runs in it; clean ones are removed on delete', async () => {
  fs.mkdirSync(path.join(repo, '.claude/agents'), { recursive: true })
  fs.writeFileSync(
    path.join(repo, '.claude/agents/isolated.md'),
    '---\nname: isolated\ndescription: works alone\nisolation: worktree\n---\nYou work alone.\n',
  )
  const sign = await teamLeadSigner('crew', env)
  inProcess = createExecutor('in-process', { env, sign })
  const seen = new Map<string, string>()
  const control = new LeaderControl({
    team: 'crew',
    env,
    backend: 'in-process',
    sign,
    inProcess,
    inProcessMain: (name) => (ctx) => void seen.set(name, ctx.cwd),
  })
  const alice = path.join(repo, '.claude/worktrees/crew-alice')
  const bob = path.join(repo, '.claude/worktrees/crew-bob')
  expect(await control.spawn('alice', { worktree: true, prompt: 'go' })).toBe(
    `started alice (in-process) in worktree ${alice} (branch swarm/crew/alice)`,
  )
  expect(await control.spawn('bob', { agentType: 'isolated' })).toContain(`in worktree ${bob}`)
  expect(await control.spawn('carol', {})).toBe('started carol (in-process)')
  await Promise.all(['alice', 'bob', 'carol'].map((n) => inProcess!.wait(`${n}@crew`)))
  expect(Object.fromEntries(seen)).toEqual({ alice, bob, carol: repo })
  const members = (await readTeam('crew', env)).members
  expect(members.find((m) => m.name === 'alice')).toMatchObject({ cwd: alice, worktreePath: alice })
  expect(members.find((m) => m.name === 'carol')?.worktreePath).toBeUndefined()

  // A roster member that asks for a worktree (team create --worktree, in-process) gets it when the leader starts it.
  await addMember('crew', { name: 'dave', worktree: 'dave-tree' }, env)
  await control.startInProcess('dave', false)
  await inProcess.wait('dave@crew')
  const dave = path.join(repo, '.claude/worktrees/dave-tree')
  expect(seen.get('dave')).toBe(dave)
  expect((await readTeam('crew', env)).members.find((m) => m.name === 'dave')).toMatchObject({ cwd: dave, worktreePath: dave })
  fs.writeFileSync(path.join(bob, 'wip.txt'), 'unfinished\n')
  const report = await teardownWorktrees((await listTeamWorktrees('crew', { env })).worktrees, { env })
  expect(report.removed.map((w) => w.path)).toEqual([alice, dave])
  expect(report.kept.map((w) => [w.path, w.reason])).toEqual([[bob, `${bob} (branch swarm/crew/bob) has 1 uncommitted file (wip.txt)`]])
  expect(fs.existsSync(alice)).toBe(false)
  expect(fs.existsSync(path.join(bob, 'wip.txt'))).toBe(true)
})
