import fs from 'node:fs/promises'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readInbox } from '../../src/mailbox/inbox.js'
import { parseStructured } from '../../src/mailbox/messages.js'
import { inboxPath, teamConfigPath } from '../../src/home/paths.js'
import { taskPath } from '../../src/tasks/task-store.js'
import { assertBuilt, swarm, tempHome, type TempHome } from './helpers.js'

let home: TempHome
beforeAll(assertBuilt)
beforeEach(async () => (home = await tempHome()))
afterEach(() => home.cleanup())

const run = (...args: string[]) => swarm(home, args)
const json = async (...args: string[]) => {
  const r = await run(...args, '--json')
  expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0)
  return JSON.parse(r.stdout)
}

describe('swarm team', () => {
  it('create --no-start, list, show, delete', async () => {
    const created = await json('team', 'create', 'alpha', '--agents', 'alice, bob', '--description', 'A team', '--cwd', home.home, '--no-start')
    expect(created.members.map((m: { name: string }) => m.name)).toEqual(['team-lead', 'alice', 'bob'])
    expect(created.members[1].cwd).toBe(home.home)

    // Starting teammates needs a model: without one, nothing is written and the error says what to do.
    const noModel = await run('team', 'create', 'beta')
    expect(noModel.exitCode).toBe(2)
    expect(noModel.stderr).toMatch(/no model is configured.*--no-start/)
    const plain = await run('team', 'create', 'beta', '--no-start')
    expect(plain.exitCode).toBe(0)
    expect(plain.stdout).toContain('created team beta')

    const again = await run('team', 'create', 'alpha', '--no-start')
    expect(again.exitCode).toBe(4)
    expect(again.stderr).toMatch(/^swarm: team "alpha" already exists — /)

    const [list, shown, human] = await Promise.all([json('team', 'list'), json('team', 'show', 'alpha'), run('team', 'show', 'alpha')])
    expect(list.map((t: { name: string }) => t.name)).toEqual(['alpha', 'beta'])
    expect(shown).toEqual(created)
    expect(human.stdout).toMatch(/alice\s+general-purpose/)
    expect(human.stdout).toContain('tasks: none')

    expect((await run('team', 'show', 'gamma')).exitCode).toBe(3)
    expect(await json('team', 'delete', 'alpha')).toEqual({
      deleted: 'alpha',
      exited: [],
      signalled: [],
      killed: [],
      processes: [],
      worktrees: { removed: [], kept: [], discarded: [], inUse: [], problems: [] },
    })
    expect((await run('team', 'delete', 'alpha')).exitCode).toBe(3)
    expect((await json('team', 'list')).map((t: { name: string }) => t.name)).toEqual(['beta'])
  })

  it('refuses an invalid --mode or --cwd before writing anything', async () => {
    expect((await run('team', 'create', 'alpha', '--mode', 'yolo', '--no-start')).exitCode).toBe(2)
    expect((await run('team', 'create', 'alpha', '--cwd', '/does/not/exist', '--no-start')).exitCode).toBe(2)
    expect(await fs.readdir(home.home)).toEqual([])
  })

  it('a corrupt config: readers exit 5 naming the file; delete --force still works', async () => {
    await json('team', 'create', 'alpha', '--no-start')
    const file = teamConfigPath('alpha', home.env)
    await fs.writeFile(file, '{oops')
    for (const args of [
      ['team', 'show', 'alpha'],
      ['team', 'list'],
      ['tasks', 'alpha', 'list'],
      ['send', 'alpha', 'team-lead', 'hi'],
    ]) {
      const r = await run(...args)
      expect(r.exitCode, args.join(' ')).toBe(5)
      expect(r.stderr).toContain(file)
    }
    expect((await run('team', 'delete', 'alpha')).exitCode).toBe(5)
    expect(await fs.readFile(file, 'utf8')).toBe('{oops')
    expect((await run('team', 'delete', 'alpha', '--force')).exitCode).toBe(0)
  })
})

describe('swarm tasks', () => {
  beforeEach(async () => {
    await json('team', 'create', 'alpha', '--agents', 'alice,bob', '--no-start')
  })

  it('add, list, show, claim, update, complete', async () => {
    expect((await json('tasks', 'alpha', 'add', 'Write parser', '--description', 'parse it')).id).toBe('1')
    const second = await json('tasks', 'alpha', 'add', 'Write tests', '--blocked-by', '1', '--owner', 'bob')
    expect(second).toMatchObject({ id: '2', owner: 'bob', blockedBy: ['1'], status: 'pending' })

    const blocked = await run('tasks', 'alpha', 'claim', '2', '--as', 'bob')
    expect(blocked.exitCode).toBe(4)
    expect(blocked.stderr).toMatch(/blocked by unfinished task\(s\) 1 \(blocked\)/)

    expect(await json('tasks', 'alpha', 'claim', '1', '--as', 'alice')).toMatchObject({ ok: true, task: { owner: 'alice', status: 'in_progress' } })
    const taken = await run('tasks', 'alpha', 'claim', '1', '--as', 'bob', '--json')
    expect(taken.exitCode).toBe(4)
    expect(JSON.parse(taken.stdout)).toMatchObject({ ok: false, reason: 'already_claimed', owner: 'alice' })
    expect(taken.stderr).toMatch(/already claimed by alice \(already_claimed\)/)

    expect(await json('tasks', 'alpha', 'complete', '1', '--from', 'alice')).toMatchObject({ task: { status: 'completed' }, unblocked: ['2'] })
    expect(await json('tasks', 'alpha', 'claim', '2', '--as', 'bob')).toMatchObject({ ok: true })
    expect(await json('tasks', 'alpha', 'update', '2', '--subject', 'Write more tests', '--no-owner', '--status', 'pending')).toMatchObject({
      subject: 'Write more tests',
      status: 'pending',
    })
    expect((await json('tasks', 'alpha', 'show', '2')).owner).toBeUndefined()

    const list = await json('tasks', 'alpha', 'list')
    expect(list.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
      ['1', 'completed'],
      ['2', 'pending'],
    ])
    const human = await run('tasks', 'alpha')
    expect(human.stdout).toMatch(/^ID\s+STATUS\s+OWNER/)
    expect(human.stdout).toMatch(/2\s+pending\s+-\s+-\s+Write more tests/)

    // bob was told about task 2 when it was created with --owner bob
    const bobInbox = await readInbox(inboxPath('alpha', 'bob', home.env))
    expect(bobInbox.map((m) => parseStructured(m.text))).toEqual([expect.objectContaining({ type: 'task_assignment', taskId: '2' })])
  })

  it('exit codes: unknown task 3, non-member 3, bad status 2, nothing to update 2, unknown team 3', async () => {
    await json('tasks', 'alpha', 'add', 'x')
    const cases: Array<[string[], number]> = [
      [['tasks', 'alpha', 'claim', '9', '--as', 'bob'], 3],
      [['tasks', 'alpha', 'show', '9'], 3],
      [['tasks', 'alpha', 'claim', '1', '--as', 'mallory'], 3],
      [['tasks', 'alpha', 'add', 'y', '--owner', 'mallory'], 3],
      [['tasks', 'alpha', 'update', '1', '--status', 'done'], 2],
      [['tasks', 'alpha', 'update', '1'], 2],
      [['tasks', 'alpha', 'show', 'abc'], 2],
      [['tasks', 'alpha', 'frobnicate'], 2],
      [['tasks', 'nope', 'list'], 3],
    ]
    const results = await Promise.all(cases.map(([args]) => run(...args)))
    for (const [i, r] of results.entries()) expect(r.exitCode, `${cases[i][0].join(' ')}: ${r.stderr}`).toBe(cases[i][1])
  })

  it('a corrupt task: list exits 5 naming it; update moves it aside', async () => {
    await json('tasks', 'alpha', 'add', 'x')
    const file = taskPath('alpha', '1', home.env)
    await fs.writeFile(file, '[1,')
    const list = await run('tasks', 'alpha', 'list')
    expect(list.exitCode).toBe(5)
    expect(list.stderr).toContain(file)
    const update = await run('tasks', 'alpha', 'update', '1', '--subject', 'y')
    expect(update.exitCode).toBe(5)
    expect(update.stderr).toMatch(/moved aside to .*1\.json\.corrupt-/)
    expect(await json('tasks', 'alpha', 'list')).toEqual([])
  })
})

describe('swarm send', () => {
  beforeEach(async () => {
    await json('team', 'create', 'alpha', '--agents', 'alice,bob', '--no-start')
  })

  it('sends to one member or everyone but the sender, and prints msg_ids', async () => {
    const one = await json('send', 'alpha', 'alice', 'hello alice', '--summary', 'greeting')
    expect(one.messages.map((m: { to: string }) => m.to)).toEqual(['alice'])
    const all = await json('send', 'alpha', '*', 'hello all', '--from', 'alice')
    expect(all.messages.map((m: { to: string }) => m.to)).toEqual(['team-lead', 'bob'])

    const alice = await readInbox(inboxPath('alpha', 'alice', home.env))
    expect(alice).toEqual([expect.objectContaining({ from: 'team-lead', text: 'hello alice', summary: 'greeting', msg_id: one.messages[0].msg_id })])
    const bob = await readInbox(inboxPath('alpha', 'bob', home.env))
    expect(bob).toEqual([expect.objectContaining({ from: 'alice', text: 'hello all', color: 'blue', msg_id: all.messages[1].msg_id })])
  })

  it('refuses a non-member recipient or sender without creating an inbox', async () => {
    const [to, from, team] = await Promise.all([
      run('send', 'alpha', 'mallory', 'hi'),
      run('send', 'alpha', 'bob', 'hi', '--from', 'mallory'),
      run('send', 'nope', 'bob', 'hi'),
    ])
    expect([to.exitCode, from.exitCode, team.exitCode]).toEqual([3, 3, 3])
    expect(to.stderr).toMatch(/mallory/)
    expect(await fs.readdir(inboxPath('alpha', 'bob', home.env).replace(/\/bob\.json$/, ''))).toEqual([])
  })
})
