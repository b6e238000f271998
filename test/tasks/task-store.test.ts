import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadLeadPublicKey } from '../../src/trust/keys.js'
import { verifyLeadMessage } from '../../src/trust/swarm-scheme.js'
import { CorruptFileError, NotFoundError, UsageError } from '../../src/errors.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { parseStructured } from '../../src/mailbox/messages.js'
import { inboxPath, tasksDir } from '../../src/home/paths.js'
import {
  claimTask,
  completeTask,
  createTask,
  deleteTask,
  deleteTasks,
  getTask,
  listTasks,
  releaseTasksOf,
  taskPath,
  updateTask,
} from '../../src/tasks/task-store.js'
import { createTeam } from '../../src/teams/team-store.js'
import type { Task } from '../../src/tasks/types.js'
import { FIXTURES, assertBuilt, raceWorkers, tempHome, type TempHome } from '../teams/helpers.js'

let home: TempHome
let env: NodeJS.ProcessEnv
beforeAll(assertBuilt)
beforeEach(async () => {
  home = await tempHome()
  env = home.env
  await createTeam({ name: 't', members: [{ name: 'alice' }, { name: 'bob' }] }, env)
})
afterEach(() => home.cleanup())

const add = (subject: string, extra: Partial<Parameters<typeof createTask>[1]> = {}) =>
  createTask('t', { subject, description: `do ${subject}`, ...extra }, { env })

async function assignments(name: string) {
  return (await readInbox(inboxPath('t', name, env))).map((m) => ({ from: m.from, msg: parseStructured(m.text) }))
}

describe('task list', () => {
  it('allocates sequential ids, never reusing a deleted one, and writes 0600 files', async () => {
    expect((await add('a')).id).toBe('1')
    expect((await add('b')).id).toBe('2')
    expect((await add('c')).id).toBe('3')
    await deleteTask('t', '3', env)
    expect((await add('d')).id).toBe('4')
    await deleteTask('t', '4', env)
    await deleteTask('t', '2', env)
    expect((await add('e')).id).toBe('5')
    expect((await listTasks('t', env)).map((t) => t.id)).toEqual(['1', '5'])
    expect(await fs.readFile(path.join(tasksDir('t', env), '.highwatermark'), 'utf8')).toBe('5')
    expect((await fs.stat(taskPath('t', '1', env))).mode & 0o777).toBe(0o600)
  })

  it('lists in numeric order (2 before 10)', async () => {
    for (let i = 1; i <= 11; i++) await add(`task ${i}`)
    expect((await listTasks('t', env)).map((t) => t.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11'])
  })

  it('gets, updates and merges metadata; rejects bad ids and statuses', async () => {
    await add('a', { activeForm: 'Doing a', metadata: { keep: 1, drop: 2 } })
    const updated = await updateTask('t', '1', { subject: 'A', status: 'in_progress', metadata: { drop: null, extra: true } }, { env })
    expect(updated).toMatchObject({ subject: 'A', status: 'in_progress', activeForm: 'Doing a', metadata: { keep: 1, extra: true } })
    expect(await getTask('t', '1', env)).toEqual(updated)
    await expect(getTask('t', '9', env)).rejects.toBeInstanceOf(NotFoundError)
    await expect(getTask('t', '../1', env)).rejects.toBeInstanceOf(UsageError)
    await expect(updateTask('t', '1', { status: 'done' as never }, { env })).rejects.toBeInstanceOf(UsageError)
    await expect(updateTask('t', '9', { subject: 'x' }, { env })).rejects.toBeInstanceOf(NotFoundError)
  })

  it('keeps blocks and blockedBy symmetric and refuses cycles and unknown ids', async () => {
    await add('a')
    await add('b', { blockedBy: ['1'] })
    await add('c', { blocks: ['2'] })
    expect((await getTask('t', '1', env)).blocks).toEqual(['2'])
    expect((await getTask('t', '2', env)).blockedBy).toEqual(['1', '3'])
    await updateTask('t', '1', { addBlocks: ['3'] }, { env })
    expect((await getTask('t', '3', env)).blockedBy).toEqual(['1'])
    await expect(updateTask('t', '2', { addBlocks: ['1'] }, { env })).rejects.toThrow(/cycle/)
    await expect(updateTask('t', '1', { addBlockedBy: ['1'] }, { env })).rejects.toThrow(/itself/)
    await expect(add('d', { blockedBy: ['2'], blocks: ['1'] })).rejects.toThrow(/cycle/)
    await expect(add('e', { blockedBy: ['42'] })).rejects.toBeInstanceOf(NotFoundError)
    expect((await listTasks('t', env)).map((t) => t.id)).toEqual(['1', '2', '3'])
  })

  it('deleting a task removes it from the others', async () => {
    await add('a')
    await add('b', { blockedBy: ['1'] })
    await deleteTask('t', '1', env)
    expect((await getTask('t', '2', env)).blockedBy).toEqual([])
    await deleteTasks('t', env)
    expect(await listTasks('t', env)).toEqual([])
  })
})

describe('claims', () => {
  it('fails with already_claimed, blocked, completed, not_found and agent_busy', async () => {
    await add('a')
    await add('b', { blockedBy: ['1'] })
    await add('c')
    const first = await claimTask('t', '1', 'alice', { env })
    expect(first).toMatchObject({ ok: true, task: { owner: 'alice', status: 'in_progress' } })
    expect(await claimTask('t', '1', 'alice', { env })).toMatchObject({ ok: true }) // idempotent
    expect(await claimTask('t', '1', 'bob', { env })).toMatchObject({ ok: false, reason: 'already_claimed', owner: 'alice' })
    expect(await claimTask('t', '2', 'bob', { env })).toMatchObject({ ok: false, reason: 'blocked', blockedBy: ['1'] })
    expect(await claimTask('t', '9', 'bob', { env })).toEqual({ ok: false, reason: 'not_found', taskId: '9' })
    expect(await claimTask('t', '3', 'alice', { env, checkAgentBusy: true })).toMatchObject({ ok: false, reason: 'agent_busy', busyWith: ['1'] })
    expect(await claimTask('t', '3', 'alice', { env })).toMatchObject({ ok: true }) // without the check

    const { task, unblocked } = await completeTask('t', '1', { env })
    expect(task.status).toBe('completed')
    expect(unblocked).toEqual(['2'])
    expect(await claimTask('t', '1', 'bob', { env })).toMatchObject({ ok: false, reason: 'completed' })
    expect(await claimTask('t', '2', 'bob', { env })).toMatchObject({ ok: true, task: { owner: 'bob' } })
  })

  it('a dependent stays blocked until all of its blockers are completed, and again if one reopens', async () => {
    await add('a')
    await add('b')
    await add('c', { blockedBy: ['1', '2'] })
    expect((await completeTask('t', '1', { env })).unblocked).toEqual([])
    expect(await claimTask('t', '3', 'bob', { env })).toMatchObject({ reason: 'blocked', blockedBy: ['2'] })
    expect((await completeTask('t', '2', { env })).unblocked).toEqual(['3'])
    await updateTask('t', '2', { status: 'pending' }, { env })
    expect(await claimTask('t', '3', 'bob', { env })).toMatchObject({ reason: 'blocked', blockedBy: ['2'] })
  })

  it('16 processes claiming one task: exactly one wins, the others get already_claimed', async () => {
    await add('contested')
    const results = (await raceWorkers(home, (i) => ['claim', 't', '1', `agent-${i}`], 16)) as Array<{ ok: boolean; reason?: string }>
    const winners = results.filter((r) => r.ok)
    expect(winners).toHaveLength(1)
    expect(results.filter((r) => !r.ok).map((r) => r.reason)).toEqual(Array(15).fill('already_claimed'))
    const winner = results.findIndex((r) => r.ok)
    expect((await getTask('t', '1', env)).owner).toBe(`agent-${winner}`)
  })

  it('16 processes claiming with the busy check: one task each at most', async () => {
    await add('one')
    await add('two')
    const results = (await raceWorkers(home, (i) => ['claim', 't', String((i % 2) + 1), 'alice', 'busy'], 16)) as Array<{
      ok: boolean
      reason?: string
    }>
    // alice may hold one of the two tasks: the first claim wins, every other is agent_busy or an idempotent re-claim of it.
    const tasks = await listTasks('t', env)
    expect(tasks.filter((t) => t.owner === 'alice')).toHaveLength(1)
    expect(results.filter((r) => !r.ok).every((r) => r.reason === 'agent_busy')).toBe(true)
  })

  it('16 processes creating tasks concurrently get 16 distinct ids', async () => {
    const results = (await raceWorkers(home, (i) => ['create-task', 't', `task ${i}`], 16)) as Task[]
    expect(results.map((t) => Number(t.id)).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
  })
})

describe('owners', () => {
  it('an owner change sends task_assignment to the new owner (not to a self-claim)', async () => {
    await add('a', { owner: 'alice' })
    await add('b')
    await updateTask('t', '2', { owner: 'bob' }, { env, by: 'alice' })
    await updateTask('t', '2', { subject: 'b2' }, { env, by: 'alice' }) // same owner: no new message
    await claimTask('t', '1', 'alice', { env })
    expect(await assignments('alice')).toEqual([
      {
        from: 'team-lead',
        msg: expect.objectContaining({ type: 'task_assignment', taskId: '1', subject: 'a', description: 'do a', assignedBy: 'team-lead' }),
      },
    ])
    expect(await assignments('bob')).toEqual([
      { from: 'alice', msg: expect.objectContaining({ type: 'task_assignment', taskId: '2', subject: 'b', assignedBy: 'alice' }) },
    ])
    await updateTask('t', '2', { owner: null }, { env })
    expect((await getTask('t', '2', env)).owner).toBeUndefined()
  })

  it("team-lead's task_assignment is signed for its recipient, as every lead order is; a teammate's is not", async () => {
    await add('a', { owner: 'alice' })
    await add('b')
    await updateTask('t', '2', { owner: 'bob' }, { env, by: 'alice' })
    const publicKey = await loadLeadPublicKey('t', env)
    const [toAlice] = await readInbox(inboxPath('t', 'alice', env))
    const [toBob] = await readInbox(inboxPath('t', 'bob', env))
    expect(verifyLeadMessage(publicKey, toAlice, 'alice')).toBe(true)
    // Bound to its recipient: the same entry copied into bob's inbox does not verify there.
    expect(verifyLeadMessage(publicKey, toAlice, 'bob')).toBe(false)
    expect(toBob.from).toBe('alice')
    expect(toBob.leadSig).toBeUndefined()
  })

  it('releaseTasksOf returns unfinished tasks (owner by name or agentId) to pending', async () => {
    await add('a')
    await add('b')
    await add('c')
    await claimTask('t', '1', 'alice', { env })
    await updateTask('t', '2', { owner: 'alice@t', status: 'in_progress' }, { env })
    await claimTask('t', '3', 'alice', { env })
    await completeTask('t', '3', { env })
    expect(await releaseTasksOf('t', 'alice', env)).toEqual(['1', '2'])
    const tasks = await listTasks('t', env)
    expect(tasks.map((t) => [t.id, t.status, t.owner])).toEqual([
      ['1', 'pending', undefined],
      ['2', 'pending', undefined],
      ['3', 'completed', 'alice'],
    ])
  })
})

describe('files from Claude Code and corrupt files', () => {
  it('reads a task file as Claude Code writes it and keeps unknown fields through an update', async () => {
    await fs.copyFile(path.join(FIXTURES, 'claude-task.json'), taskPath('t', '3', env))
    const task = await getTask('t', '3', env)
    expect(task).toMatchObject({ id: '3', owner: 'implementer', status: 'in_progress', blockedBy: ['1', '2'], metadata: { priority: 'high' } })
    await updateTask('t', '3', { status: 'completed' }, { env })
    const raw = JSON.parse(await fs.readFile(taskPath('t', '3', env), 'utf8'))
    const original = JSON.parse(await fs.readFile(path.join(FIXTURES, 'claude-task.json'), 'utf8'))
    expect(raw).toEqual({ ...original, status: 'completed' })
    expect((await add('next')).id).toBe('4') // ids continue after files another tool wrote
  })

  it('what swarm writes has exactly the task fields', async () => {
    await add('a', { activeForm: 'Doing a', owner: 'bob', metadata: { k: 1 } })
    const raw = JSON.parse(await fs.readFile(taskPath('t', '1', env), 'utf8'))
    expect(Object.keys(raw)).toEqual(['id', 'subject', 'description', 'activeForm', 'owner', 'status', 'blocks', 'blockedBy', 'metadata'])
  })

  it('a corrupt task: readers name it; writers move it aside; other tasks still release', async () => {
    await add('a')
    await add('b')
    await claimTask('t', '2', 'alice', { env })
    const file = taskPath('t', '1', env)
    await fs.writeFile(file, '{"id": "1", "subj')
    const listErr = await listTasks('t', env).catch((e) => e)
    expect(listErr).toBeInstanceOf(CorruptFileError)
    expect(listErr.message).toContain(file)
    await expect(getTask('t', '1', env)).rejects.toBeInstanceOf(CorruptFileError)
    // An unrelated corrupt file does not stop a claim of another task.
    await add('c')
    expect(await claimTask('t', '3', 'bob', { env })).toMatchObject({ ok: true })

    await expect(releaseTasksOf('t', 'alice', env)).rejects.toBeInstanceOf(CorruptFileError)
    expect((await getTask('t', '2', env)).status).toBe('pending')

    const writeErr = await updateTask('t', '1', { subject: 'x' }, { env }).catch((e) => e)
    expect(writeErr).toBeInstanceOf(CorruptFileError)
    expect(await fs.readFile(writeErr.movedTo, 'utf8')).toBe('{"id": "1", "subj')
    expect((await add('d')).id).toBe('4')
    expect((await listTasks('t', env)).map((t) => t.id)).toEqual(['2', '3', '4'])
  })

  it('the id of a task moved aside is never reused', async () => {
    await add('a')
    await add('b')
    await fs.writeFile(taskPath('t', '2', env), 'not json')
    await expect(updateTask('t', '2', { subject: 'x' }, { env })).rejects.toBeInstanceOf(CorruptFileError)
    await fs.rm(path.join(tasksDir('t', env), '.highwatermark'))
    expect((await add('c')).id).toBe('3')
  })

  it('a corrupt high-water mark is moved aside and reported', async () => {
    await add('a')
    const mark = path.join(tasksDir('t', env), '.highwatermark')
    await fs.writeFile(mark, 'banana')
    const err = await add('b').catch((e) => e)
    expect(err).toBeInstanceOf(CorruptFileError)
    expect(await fs.readFile(err.movedTo, 'utf8')).toBe('banana')
    expect((await add('b')).id).toBe('2')
  })
})
