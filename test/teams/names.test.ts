import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { InvalidNameError, SwarmError } from '../../src/errors.js'
import { claimTask, createTask } from '../../src/tasks/task-store.js'
import { addMember, createTeam, readTeam } from '../../src/teams/team-store.js'
import { assertBuilt, listTree, swarm, tempHome, type TempHome } from './helpers.js'

const BAD_NAMES = ['..', '.', 'a/b', '../etc', 'a\\b', 'bad\u0001name', 'tab\tname', '.hidden', '-rf', 'has space', 'x'.repeat(65), '']

let home: TempHome
beforeAll(assertBuilt)
beforeEach(async () => (home = await tempHome()))
afterEach(() => home.cleanup())

describe('invalid names are refused before touching the disk', () => {
  it.each(BAD_NAMES)('team name %j', async (name) => {
    await expect(createTeam({ name }, home.env)).rejects.toBeInstanceOf(InvalidNameError)
    await expect(readTeam(name, home.env)).rejects.toBeInstanceOf(InvalidNameError)
    await expect(createTask(name, { subject: 's', description: '' }, { env: home.env })).rejects.toBeInstanceOf(InvalidNameError)
    expect(await listTree(home.home)).toEqual([])
  })

  it.each(BAD_NAMES)('member name %j', async (name) => {
    await expect(createTeam({ name: 'ok', members: [{ name }] }, home.env)).rejects.toBeInstanceOf(InvalidNameError)
    expect(await listTree(home.home)).toEqual([])
  })

  it('a bad member name added to an existing team changes nothing', async () => {
    await createTeam({ name: 'ok', members: [{ name: 'alice' }] }, home.env)
    const before = await listTree(home.home)
    await expect(addMember('ok', { name: '../../x' }, home.env)).rejects.toBeInstanceOf(InvalidNameError)
    await expect(claimTask('ok', '1', 'bad/agent', { env: home.env })).rejects.toBeInstanceOf(SwarmError)
    await expect(createTask('ok', { subject: 's', description: '', owner: '../x' }, { env: home.env })).rejects.toBeInstanceOf(SwarmError)
    expect(await listTree(home.home)).toEqual(before)
  })

  it('a 64-character name is fine', async () => {
    const name = 'n'.repeat(64)
    await createTeam({ name, members: [{ name }] }, home.env)
    expect((await readTeam(name, home.env)).members.map((m) => m.name)).toEqual(['team-lead', name])
  })

  it('the CLI exits 2 and creates nothing', async () => {
    for (const args of [
      ['team', 'create', '..', '--no-start'],
      ['team', 'create', 'a/b', '--no-start'],
      ['team', 'create', 'x'.repeat(65), '--no-start'],
      ['team', 'create', 'ok', '--agents', 'alice,../bob', '--no-start'],
      ['team', 'create', 'bad\u0007bell', '--no-start'],
      ['tasks', '../x', 'list'],
      ['send', '..', 'bob', 'hi'],
    ]) {
      const r = await swarm(home, args)
      expect(r.exitCode, args.join(' ')).toBe(2)
      expect(r.stderr).toMatch(/^swarm: invalid (team|agent) name/)
    }
    expect(await listTree(home.home)).toEqual([])
  })
})
