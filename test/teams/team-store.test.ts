import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ConflictError, CorruptFileError, NotFoundError, UsageError } from '../../src/errors.js'
import { updateMemberState } from '../../src/store/member-state.js'
import { deleteTeamFully } from '../../src/leader/lifecycle.js'
import { inboxesDir, tasksDir, teamConfigPath, teamDir } from '../../src/home/paths.js'
import { createTask, getTask, claimTask } from '../../src/tasks/task-store.js'
import {
  addMember,
  createTeam,
  getMember,
  listTeams,
  readTeam,
  removeMember,
  teamExists,
  updateMember,
  updateTeam,
} from '../../src/teams/team-store.js'
import { FIXTURES, assertBuilt, raceWorkers, startWorker, tempHome, type TempHome } from './helpers.js'

/** The member shape Claude Code writes: nothing more (strict) and nothing required missing. */
const ClaudeMember = z.strictObject({
  agentId: z.string().regex(/^[^@]+@[^@]+$/),
  name: z.string(),
  agentType: z.string(),
  model: z.string().optional(),
  prompt: z.string().optional(),
  color: z.string().optional(),
  planModeRequired: z.boolean().optional(),
  joinedAt: z.number().int(),
  tmuxPaneId: z.string(),
  cwd: z.string(),
  subscriptions: z.array(z.string()),
  backendType: z.enum(['tmux', 'iterm2', 'in-process']).optional(),
  isActive: z.boolean().optional(),
  mode: z.string().optional(),
})
const ClaudeTeam = z.strictObject({
  name: z.string(),
  description: z.string().optional(),
  createdAt: z.number().int(),
  leadAgentId: z.string(),
  leadSessionId: z.string().optional(),
  members: z.array(ClaudeMember),
})

let home: TempHome
beforeAll(assertBuilt)
beforeEach(async () => (home = await tempHome()))
afterEach(() => home.cleanup())

async function installFixture(team: string): Promise<string> {
  const file = teamConfigPath(team, home.env)
  await fs.mkdir(path.dirname(file), { recursive: true })
  await fs.copyFile(path.join(FIXTURES, 'claude-config.json'), file)
  return file
}

describe('team store', () => {
  it('creates a team with the lead first, colours for teammates, and 0700/0600 modes', async () => {
    const team = await createTeam(
      { name: 'alpha', description: 'd', cwd: '/tmp/project', members: [{ name: 'alice', model: 'm1' }, { name: 'bob' }] },
      home.env,
    )
    expect(team.leadAgentId).toBe('team-lead@alpha')
    expect(team.members.map((m) => [m.name, m.agentId, m.tmuxPaneId])).toEqual([
      ['team-lead', 'team-lead@alpha', ''],
      ['alice', 'alice@alpha', ''],
      ['bob', 'bob@alpha', ''],
    ])
    expect(team.members[0].color).toBeUndefined()
    expect(team.members[1].color).not.toBe(team.members[2].color)
    expect(team.members[1].model).toBe('m1')
    expect(team.members.every((m) => m.cwd === '/tmp/project')).toBe(true)

    const raw = JSON.parse(await fs.readFile(teamConfigPath('alpha', home.env), 'utf8'))
    expect(ClaudeTeam.parse(raw)).toEqual(raw) // what swarm writes is in Claude Code's shape
    expect(raw).toEqual(team)
    expect((await fs.stat(teamConfigPath('alpha', home.env))).mode & 0o777).toBe(0o600)
    for (const dir of [teamDir('alpha', home.env), inboxesDir('alpha', home.env), tasksDir('alpha', home.env)]) {
      expect((await fs.stat(dir)).mode & 0o777).toBe(0o700)
    }
  })

  it('refuses a second team of the same name and duplicate members', async () => {
    await createTeam({ name: 'alpha' }, home.env)
    const err = await createTeam({ name: 'alpha' }, home.env).catch((e) => e)
    expect(err).toBeInstanceOf(ConflictError)
    expect(err.code).toBe('SWARM_TEAM_EXISTS')
    await expect(createTeam({ name: 'beta', members: [{ name: 'a' }, { name: 'a' }] }, home.env)).rejects.toBeInstanceOf(UsageError)
    expect(await teamExists('beta', home.env)).toBe(false)
  })

  it('reads, lists, updates members and removes them', async () => {
    await createTeam({ name: 'alpha', members: [{ name: 'alice' }] }, home.env)
    await createTeam({ name: 'beta' }, home.env)
    await fs.mkdir(path.join(home.home, 'teams', '.stray'), { recursive: true })
    await fs.mkdir(path.join(home.home, 'teams', 'empty'), { recursive: true })
    const listed = await listTeams(home.env)
    expect(listed.map((t) => [t.name, t.team?.members.length, t.error])).toEqual([
      ['alpha', 2, undefined],
      ['beta', 1, undefined],
      ['empty', undefined, 'no config.json'],
    ])

    const bob = await addMember('alpha', { name: 'bob', agentType: 'reviewer', backendType: 'tmux' }, home.env)
    expect(bob).toMatchObject({ agentId: 'bob@alpha', agentType: 'reviewer', backendType: 'tmux', subscriptions: [] })
    await expect(addMember('alpha', { name: 'bob' }, home.env)).rejects.toMatchObject({ code: 'SWARM_MEMBER_EXISTS' })

    await updateMember('alpha', 'bob', { tmuxPaneId: '%3', isActive: true }, home.env)
    expect(await getMember('alpha', 'bob', home.env)).toMatchObject({ tmuxPaneId: '%3', isActive: true, agentType: 'reviewer' })
    await expect(updateMember('alpha', 'bob', { name: 'robert' }, home.env)).rejects.toBeInstanceOf(UsageError)
    await expect(getMember('alpha', 'carol', home.env)).rejects.toBeInstanceOf(NotFoundError)

    await removeMember('alpha', 'bob', home.env)
    expect((await readTeam('alpha', home.env)).members.map((m) => m.name)).toEqual(['team-lead', 'alice'])
    await expect(removeMember('alpha', 'team-lead', home.env)).rejects.toBeInstanceOf(UsageError)
    await expect(removeMember('alpha', 'bob', home.env)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('updateTeam validates what mutate returns and never creates a missing team', async () => {
    await expect(updateTeam('ghost', () => {}, home.env)).rejects.toBeInstanceOf(NotFoundError)
    expect(await fs.readdir(home.home)).toEqual([])
    await createTeam({ name: 'alpha' }, home.env)
    await expect(updateTeam('alpha', (t) => ({ ...t, members: 'nope' }) as never, home.env)).rejects.toThrow(/invalid config/)
    const updated = await updateTeam(
      'alpha',
      (t) => {
        t.description = 'new'
      },
      home.env,
    )
    expect(updated.description).toBe('new')
    expect((await readTeam('alpha', home.env)).description).toBe('new')
  })

  it('removing a member returns its open tasks to pending', async () => {
    await createTeam({ name: 'alpha', members: [{ name: 'alice' }, { name: 'bob' }] }, home.env)
    const env = home.env
    await createTask('alpha', { subject: 'a', description: '' }, { env })
    await createTask('alpha', { subject: 'b', description: '' }, { env })
    await createTask('alpha', { subject: 'c', description: '' }, { env })
    expect((await claimTask('alpha', '1', 'alice', { env })).ok).toBe(true)
    expect((await claimTask('alpha', '2', 'alice', { env })).ok).toBe(true)
    expect((await claimTask('alpha', '3', 'bob', { env })).ok).toBe(true)
    const { completeTask } = await import('../../src/tasks/task-store.js')
    await completeTask('alpha', '2', { env })
    const { removeFromRoster } = await import('../../src/tasks/roster.js')
    await removeFromRoster('alpha', 'alice', env)
    expect(await getTask('alpha', '1', env)).toMatchObject({ status: 'pending' })
    expect((await getTask('alpha', '1', env)).owner).toBeUndefined()
    expect(await getTask('alpha', '2', env)).toMatchObject({ status: 'completed', owner: 'alice' })
    expect(await getTask('alpha', '3', env)).toMatchObject({ status: 'in_progress', owner: 'bob' })
  })

  it('deleteTeamFully refuses while a teammate is mid-turn (saying who), and removes every file', async () => {
    await createTeam({ name: 'alpha', members: [{ name: 'alice', isActive: true }] }, home.env)
    await createTask('alpha', { subject: 'a', description: '' }, { env: home.env })
    // alice's state says she is working on task 1, with a live pid (this process).
    await updateMemberState('alpha', 'alice', { status: 'working', pid: process.pid, currentTask: '1' }, home.env, { create: true })
    await expect(deleteTeamFully('alpha', { env: home.env })).rejects.toMatchObject({
      code: 'SWARM_TEAM_BUSY',
      exitCode: 4,
      message: expect.stringContaining('alice (working, task #1)'),
    })
    expect(await teamExists('alpha', home.env)).toBe(true)
    expect(await deleteTeamFully('alpha', { env: home.env, force: true })).toEqual({
      team: 'alpha',
      exited: [],
      killed: [],
      processes: [],
      worktrees: { removed: [], kept: [], discarded: [], inUse: [], problems: [] },
    })
    expect(await teamExists('alpha', home.env)).toBe(false)
    await expect(fs.access(tasksDir('alpha', home.env))).rejects.toThrow()
    await expect(deleteTeamFully('alpha', { env: home.env })).rejects.toBeInstanceOf(NotFoundError)
  })
})

describe('the files a removed teammate or a deleted team leaves', () => {
  /** What a codex teammate's spawn and its messages leave on disk. */
  async function leaveFiles(team: string, name: string): Promise<string[]> {
    const { agentDir, agentHomeDir, inboxPath, sentLogPath } = await import('../../src/home/paths.js')
    const { appendMessage } = await import('../../src/mailbox/inbox.js')
    const cliHome = agentHomeDir(team, name, envOf())
    await fs.mkdir(cliHome, { recursive: true })
    for (const f of ['config.toml', 'hooks.json', 'state_5.sqlite']) await fs.writeFile(path.join(cliHome, f), 'x')
    await fs.mkdir(agentDir(team, name, envOf()), { recursive: true })
    await fs.writeFile(path.join(agentDir(team, name, envOf()), 'state.json'), '{}')
    await appendMessage(inboxPath(team, name, envOf()), { from: 'team-lead', text: 'hi' })
    await fs.mkdir(path.dirname(sentLogPath(team, name, envOf())), { recursive: true })
    await fs.writeFile(sentLogPath(team, name, envOf()), '{}\n')
    return [cliHome, agentDir(team, name, envOf()), inboxPath(team, name, envOf()), sentLogPath(team, name, envOf())]
  }
  const envOf = () => home.env
  const gone = async (p: string) =>
    expect(
      await fs.stat(p).then(
        () => `${p} is still there`,
        () => 'gone',
      ),
    ).toBe('gone')

  it('kill --remove (removeTeammate) takes away its agent dir, inbox and agent home, and nothing of the others', async () => {
    await createTeam({ name: 'alpha', members: [{ name: 'alice' }, { name: 'bob' }] }, home.env)
    const alice = await leaveFiles('alpha', 'alice')
    const bob = await leaveFiles('alpha', 'bob')
    const { removeTeammate } = await import('../../src/leader/lifecycle.js')
    await removeTeammate('alpha', 'alice', { env: home.env })
    for (const p of alice) await gone(p)
    await gone(`${alice[2]}.spool`)
    for (const p of bob) await fs.access(p)
    expect((await readTeam('alpha', home.env)).members.map((m) => m.name)).toEqual(['team-lead', 'bob'])
  })

  it('team delete removes <root>/agent-homes/<team> too', async () => {
    await createTeam({ name: 'alpha', members: [{ name: 'alice' }] }, home.env)
    await createTeam({ name: 'beta', members: [{ name: 'alice' }] }, home.env)
    const alpha = await leaveFiles('alpha', 'alice')
    const beta = await leaveFiles('beta', 'alice')
    await deleteTeamFully('alpha', { env: home.env, force: true })
    for (const p of alpha) await gone(p)
    await gone(path.join(home.home, 'agent-homes', 'alpha'))
    for (const p of beta) await fs.access(p)
  })
})

describe('compatibility with Claude Code', () => {
  it('reads a config.json exactly as Claude Code writes it and keeps unknown fields through a write', async () => {
    const file = await installFixture('auth-refactor')
    const original = JSON.parse(await fs.readFile(file, 'utf8'))
    const team = await readTeam('auth-refactor', home.env)
    expect(team.members.map((m) => [m.name, m.color, m.backendType, m.isActive, m.planModeRequired])).toEqual([
      ['team-lead', undefined, undefined, undefined, undefined],
      ['researcher', 'blue', 'tmux', true, false],
      ['implementer', 'green', 'in-process', false, true],
    ])
    expect(team.leadSessionId).toBe('4f1c2a9e-8d1b-4c51-9a57-2f0a6c7b1e33')

    await updateTeam('auth-refactor', () => {}, home.env)
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual(original)

    await addMember('auth-refactor', { name: 'tester' }, home.env)
    const after = JSON.parse(await fs.readFile(file, 'utf8'))
    expect(after.teamFeatureFlags).toEqual(['mailbox-v2'])
    expect(after.members[1].lastSeenTurn).toEqual({ n: 7, at: '2025-11-30T05:20:12.000Z' })
    expect(after.members.slice(0, 3)).toEqual(original.members)
    // the palette skips colours already taken (blue, green)
    expect(after.members[3]).toMatchObject({ name: 'tester', agentId: 'tester@auth-refactor', color: 'yellow', cwd: '/Users/dev/project' })
    expect(ClaudeMember.parse(after.members[3])).toEqual(after.members[3])
  })
})

describe('corrupt config.json', () => {
  it('readers name the file; writers move it aside and say where', async () => {
    await createTeam({ name: 'alpha' }, home.env)
    const file = teamConfigPath('alpha', home.env)
    await fs.writeFile(file, '{"name": "alpha", "members": [')
    const readErr = await readTeam('alpha', home.env).catch((e) => e)
    expect(readErr).toBeInstanceOf(CorruptFileError)
    expect(readErr.message).toContain(file)
    expect(readErr.exitCode).toBe(5)
    expect((await listTeams(home.env))[0].error).toContain(file)

    const writeErr = await addMember('alpha', { name: 'bob' }, home.env).catch((e) => e)
    expect(writeErr).toBeInstanceOf(CorruptFileError)
    expect(writeErr.movedTo).toMatch(/config\.json\.corrupt-/)
    expect(writeErr.message).toContain(writeErr.movedTo)
    expect(await fs.readFile(writeErr.movedTo, 'utf8')).toBe('{"name": "alpha", "members": [')
    await expect(fs.access(file)).rejects.toThrow() // not overwritten with a guess
  })

  it('a config that is valid JSON but the wrong shape is corrupt too', async () => {
    await createTeam({ name: 'alpha' }, home.env)
    await fs.writeFile(teamConfigPath('alpha', home.env), JSON.stringify({ name: 'alpha', members: [{ name: 42 }] }))
    await expect(readTeam('alpha', home.env)).rejects.toThrow(/corrupt file .*config\.json \((createdAt|members)/)
  })
})

describe('concurrency', () => {
  it('16 processes adding members to one team concurrently: all 16 present', async () => {
    await createTeam({ name: 'busy' }, home.env)
    await raceWorkers(home, (i) => ['add-member', 'busy', `agent-${i}`], 16)
    const team = await readTeam('busy', home.env)
    expect(team.members.map((m) => m.name).sort()).toEqual(['team-lead', ...Array.from({ length: 16 }, (_, i) => `agent-${i}`)].sort())
  })

  it('a config lock whose holder was SIGKILLed is recovered after stale', async () => {
    await createTeam({ name: 'alpha' }, home.env)
    const holder = await startWorker(home, ['hold-config-lock', 'alpha'])
    await expect(fs.stat(`${teamConfigPath('alpha', home.env)}.lock`)).resolves.toBeTruthy()
    const exited = new Promise((resolve) => holder.on('exit', resolve))
    holder.kill('SIGKILL')
    await exited
    await addMember('alpha', { name: 'after' }, home.env)
    expect((await readTeam('alpha', home.env)).members.map((m) => m.name)).toContain('after')
  })
})
