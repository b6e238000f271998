import fs from 'node:fs/promises'
import path from 'node:path'
import { CorruptFileError, NotFoundError, type SwarmError, UsageError } from '../errors.js'
import { atomicWriteFile, atomicWriteJson, moveAside, OWN_FILE, pathExists, readFileIfExists, readJsonFile, readJsonForWrite } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import { tasksDir, validateAgentName } from '../home/paths.js'
import { notifyAssignment } from './task-assign.js'
import { assertNoCycle, openBlockers, ownerName, unblockedBy } from './task-graph.js'
import { Task, TaskStatus } from './types.js'
import type { Env } from '../home/env.js'

/** Who makes a change (for `task_assignment.assignedBy`; default team-lead) and where the root is. */
export interface TaskOptions {
  by?: string
  env?: Env
}

/** A task to create; its id, `status: 'pending'` and the other side of its dependencies are filled in. */
export interface NewTask {
  subject: string
  description: string
  activeForm?: string
  owner?: string
  blockedBy?: string[]
  blocks?: string[]
  metadata?: Record<string, unknown>
}

/**
 * A change to one task. `owner: null` (or '') clears the owner. `metadata` is merged; a key set
 * to null is removed. `addBlocks`/`addBlockedBy` also update the other side, so `blocks` and
 * `blockedBy` stay symmetric.
 */
export interface TaskPatch {
  status?: TaskStatus
  owner?: string | null
  subject?: string
  description?: string
  activeForm?: string
  addBlocks?: string[]
  addBlockedBy?: string[]
  metadata?: Record<string, unknown>
}

/** Why a claim failed, with what the caller needs to explain it (the owner, the open blockers, …). */
export type ClaimFailure =
  | { ok: false; reason: 'not_found'; taskId: string }
  | { ok: false; reason: 'completed'; task: Task }
  | { ok: false; reason: 'already_claimed'; task: Task; owner: string }
  | { ok: false; reason: 'blocked'; task: Task; blockedBy: string[] }
  | { ok: false; reason: 'agent_busy'; task: Task; busyWith: string[] }
export type ClaimResult = { ok: true; task: Task } | ClaimFailure

const ID_RE = /^(0|[1-9][0-9]{0,14})$/
const TASK_FILE_RE = /^(0|[1-9][0-9]*)\.json$/

/** Checks a task id ("1", "2", …) before a path is built from it. */
export function validateTaskId(id: string): string {
  if (typeof id !== 'string' || !ID_RE.test(id)) {
    throw new UsageError(`invalid task id ${JSON.stringify(id)}`, { hint: 'task ids are whole numbers such as 1, 2, 3' })
  }
  return id
}

export function taskPath(team: string, id: string, env?: Env): string {
  return path.join(tasksDir(team, env), `${validateTaskId(id)}.json`)
}

/** The list lock file (`tasks/<team>/.lock`; proper-lockfile's lock is `.lock.lock`, as Claude Code's). */
function listLockFile(team: string, env?: Env): string {
  return path.join(tasksDir(team, env), '.lock')
}
function highWaterMarkFile(team: string, env?: Env): string {
  return path.join(tasksDir(team, env), '.highwatermark')
}

/**
 * Creates a task with the next id, allocated under the list lock from the high-water mark (so a
 * deleted id is never reused). Blockers named in `blockedBy`/`blocks` must exist; their other
 * side is updated. An initial owner gets a `task_assignment` message.
 */
export async function createTask(team: string, input: NewTask, opts: TaskOptions = {}): Promise<Task> {
  const { env } = opts
  const blockedBy = unique((input.blockedBy ?? []).map(validateTaskId))
  const blocks = unique((input.blocks ?? []).map(validateTaskId))
  if (input.owner) validateOwner(input.owner)
  if (blockedBy.length || blocks.length) {
    const all = await listTasks(team, env)
    for (const id of [...blockedBy, ...blocks]) if (!all.some((t) => t.id === id)) throw taskNotFound(team, id)
    // 'new' stands for the id not allocated yet; it is not a valid id, so it names no other task.
    assertNoCycle(all, [
      ...blockedBy.map((blocker) => ({ blocker, dependent: 'new' })),
      ...blocks.map((dependent) => ({ blocker: 'new', dependent })),
    ])
  }
  const task = await withFileLock(
    listLockFile(team, env),
    async () => {
      const id = String((await highestId(team, env)) + 1)
      const created = Task.parse({
        id,
        subject: input.subject,
        description: input.description,
        ...(input.activeForm !== undefined && { activeForm: input.activeForm }),
        ...(input.owner && { owner: input.owner }),
        status: 'pending',
        blocks,
        blockedBy,
        ...(input.metadata !== undefined && { metadata: input.metadata }),
      })
      await atomicWriteJson(taskPath(team, id, env), created)
      await atomicWriteFile(highWaterMarkFile(team, env), id)
      return created
    },
    { initial: '' },
  )
  for (const other of blockedBy) await linkSide(team, other, 'blocks', task.id, env)
  for (const other of blocks) await linkSide(team, other, 'blockedBy', task.id, env)
  if (task.owner) await notifyAssignment(team, task, opts.by, env)
  return task
}

/** NotFoundError (exit 3) if missing; CorruptFileError (exit 5) naming the file. */
export async function getTask(team: string, id: string, env?: Env): Promise<Task> {
  const task = await readJsonFile(taskPath(team, id, env), Task, OWN_FILE)
  if (!task) throw taskNotFound(team, id)
  return task
}

/** Every task, sorted by numeric id. A corrupt task file throws CorruptFileError naming it. */
export async function listTasks(team: string, env?: Env): Promise<Task[]> {
  const { tasks, corrupt } = await readAllTasks(team, env)
  if (corrupt.length) throw corrupt[0]
  return tasks
}

/**
 * Applies `patch` under the task's lock and writes it atomically. An owner change sends a
 * `task_assignment` to the new owner (unless it assigned itself). A corrupt task file is moved
 * aside and reported, never overwritten.
 */
export async function updateTask(team: string, id: string, patch: TaskPatch, opts: TaskOptions = {}): Promise<Task> {
  const { env } = opts
  const file = taskPath(team, id, env)
  if (patch.status !== undefined && !TaskStatus.safeParse(patch.status).success) {
    throw new UsageError(`invalid task status ${JSON.stringify(patch.status)}`, { hint: `use one of ${TaskStatus.options.join(', ')}` })
  }
  if (patch.owner) validateOwner(patch.owner)
  const addBlocks = unique((patch.addBlocks ?? []).map(validateTaskId))
  const addBlockedBy = unique((patch.addBlockedBy ?? []).map(validateTaskId))
  if (addBlocks.length || addBlockedBy.length) {
    const all = await listTasks(team, env)
    for (const other of [...addBlocks, ...addBlockedBy]) if (!all.some((t) => t.id === other)) throw taskNotFound(team, other)
    assertNoCycle(all, [
      ...addBlocks.map((dependent) => ({ blocker: id, dependent })),
      ...addBlockedBy.map((blocker) => ({ blocker, dependent: id })),
    ])
  }
  if (!(await pathExists(file))) throw taskNotFound(team, id)
  let before: Task | undefined
  const after = await withFileLock(file, async () => {
    before = await readJsonForWrite(file, Task, OWN_FILE)
    if (!before) throw taskNotFound(team, id)
    const next: Task = structuredClone(before)
    if (patch.status !== undefined) next.status = patch.status
    if (patch.subject !== undefined) next.subject = patch.subject
    if (patch.description !== undefined) next.description = patch.description
    if (patch.activeForm !== undefined) next.activeForm = patch.activeForm
    if (patch.owner !== undefined) {
      if (patch.owner) next.owner = patch.owner
      else delete next.owner
    }
    if (patch.metadata !== undefined) next.metadata = mergeMetadata(next.metadata, patch.metadata)
    next.blocks = unique([...next.blocks, ...addBlocks])
    next.blockedBy = unique([...next.blockedBy, ...addBlockedBy])
    const written = Task.parse(next)
    await atomicWriteJson(file, written)
    return written
  })
  for (const other of addBlocks) await linkSide(team, other, 'blockedBy', id, env)
  for (const other of addBlockedBy) await linkSide(team, other, 'blocks', id, env)
  if (after.owner && after.owner !== before?.owner) await notifyAssignment(team, after, opts.by, env)
  return after
}

/**
 * Takes a task for `agent`: it becomes the owner and the task `in_progress`. Fails (as a result,
 * not a throw) when the task is missing, completed, owned by someone else, blocked by an
 * unfinished task, or — with `checkAgentBusy` — when the agent already owns an unfinished task.
 * Safe under many concurrent claimers: exactly one wins.
 */
export async function claimTask(team: string, id: string, agent: string, opts: { checkAgentBusy?: boolean; env?: Env } = {}): Promise<ClaimResult> {
  const { env } = opts
  const file = taskPath(team, id, env)
  validateOwner(agent)
  if (!(await pathExists(file))) return { ok: false, reason: 'not_found', taskId: id }
  const attempt = async (): Promise<ClaimResult> => {
    // An unrelated corrupt file does not stop a claim; a corrupt blocker does (below).
    const { tasks: all, corrupt } = await readAllTasks(team, env)
    if (opts.checkAgentBusy) {
      const busyWith = all
        .filter((t) => t.id !== id && t.status !== 'completed' && ownerName(t.owner, team) === ownerName(agent, team))
        .map((t) => t.id)
      if (busyWith.length) {
        const task = all.find((t) => t.id === id)
        if (task) return { ok: false, reason: 'agent_busy', task, busyWith }
      }
    }
    return withFileLock(file, async () => {
      const task = await readJsonForWrite(file, Task, OWN_FILE)
      if (!task) return { ok: false, reason: 'not_found', taskId: id }
      if (task.status === 'completed') return { ok: false, reason: 'completed', task }
      if (task.owner && ownerName(task.owner, team) !== ownerName(agent, team)) {
        return { ok: false, reason: 'already_claimed', task, owner: task.owner }
      }
      const unreadable = corrupt.find((e) => task.blockedBy.some((b) => e.file === taskPath(team, b, env)))
      if (unreadable) throw unreadable
      const blockers = openBlockers(task, all)
      if (blockers.length) return { ok: false, reason: 'blocked', task, blockedBy: blockers }
      const claimed = Task.parse({ ...task, owner: agent, status: 'in_progress' })
      await atomicWriteJson(file, claimed)
      return { ok: true, task: claimed }
    })
  }
  // The busy check must see no other claim by the same agent in between: hold the list lock.
  return opts.checkAgentBusy ? withFileLock(listLockFile(team, env), attempt, { initial: '' }) : attempt()
}

/** Marks a task completed; returns it and the ids of the tasks that nothing blocks any more. */
export async function completeTask(team: string, id: string, opts: TaskOptions = {}): Promise<{ task: Task; unblocked: string[] }> {
  const task = await updateTask(team, id, { status: 'completed' }, opts)
  const { tasks } = await readAllTasks(team, opts.env)
  return { task, unblocked: unblockedBy(id, tasks) }
}

/**
 * Returns every unfinished task owned by `agentName` (or `agentName@team`) to `pending` with no
 * owner; returns their ids. Tasks in readable files are released even when another file is
 * corrupt; that one is reported afterwards (CorruptFileError).
 */
export async function releaseTasksOf(team: string, agentName: string, env?: Env): Promise<string[]> {
  validateAgentName(agentName)
  const { tasks, corrupt } = await readAllTasks(team, env)
  const released: string[] = []
  for (const t of tasks) {
    if (t.status === 'completed' || ownerName(t.owner, team) !== agentName) continue
    const file = taskPath(team, t.id, env)
    const done = await withFileLock(file, async () => {
      const current = await readJsonForWrite(file, Task, OWN_FILE)
      // Re-checked under the lock: the task may have changed hands since it was listed.
      if (!current || current.status === 'completed' || ownerName(current.owner, team) !== agentName) return false
      const next: Task = { ...current, status: 'pending' }
      delete next.owner
      await atomicWriteJson(file, Task.parse(next))
      return true
    })
    if (done) released.push(t.id)
  }
  if (corrupt.length) throw corrupt[0]
  return released
}

/**
 * Deletes one task: its id stays used (high-water mark) and it is removed from the
 * `blocks`/`blockedBy` of the others.
 */
export async function deleteTask(team: string, id: string, env?: Env): Promise<void> {
  const file = taskPath(team, id, env)
  if (!(await pathExists(file))) throw taskNotFound(team, id)
  await withFileLock(
    listLockFile(team, env),
    async () => {
      const mark = Math.max(await highestId(team, env), Number(id))
      await atomicWriteFile(highWaterMarkFile(team, env), String(mark))
      await fs.rm(file, { force: true })
    },
    { initial: '' },
  )
  const { tasks } = await readAllTasks(team, env)
  for (const t of tasks) {
    if (!t.blocks.includes(id) && !t.blockedBy.includes(id)) continue
    const other = taskPath(team, t.id, env)
    await withFileLock(other, async () => {
      const current = await readJsonForWrite(other, Task, OWN_FILE)
      if (!current) return
      current.blocks = current.blocks.filter((x) => x !== id)
      current.blockedBy = current.blockedBy.filter((x) => x !== id)
      await atomicWriteJson(other, current)
    })
  }
}

/** Removes the whole task list of a team (`tasks/<team>`). */
export async function deleteTasks(team: string, env?: Env): Promise<void> {
  await fs.rm(tasksDir(team, env), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
}

/** Reads every task file; corrupt ones are collected (not thrown) so callers can decide. */
async function readAllTasks(team: string, env?: Env): Promise<{ tasks: Task[]; corrupt: CorruptFileError[] }> {
  const dir = tasksDir(team, env)
  let names: string[]
  try {
    names = await fs.readdir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { tasks: [], corrupt: [] }
    throw err
  }
  const ids = names.filter((n) => TASK_FILE_RE.test(n)).map((n) => n.slice(0, -'.json'.length))
  ids.sort((a, b) => Number(a) - Number(b))
  const tasks: Task[] = []
  const corrupt: CorruptFileError[] = []
  for (const id of ids) {
    try {
      const task = await readJsonFile(path.join(dir, `${id}.json`), Task, OWN_FILE)
      if (task) tasks.push(task) // undefined: deleted since the readdir
    } catch (err) {
      if (!(err instanceof CorruptFileError)) throw err
      corrupt.push(err)
    }
  }
  return { tasks, corrupt }
}

/** The highest id ever used: the larger of the high-water mark and the highest task file. */
async function highestId(team: string, env?: Env): Promise<number> {
  const markFile = highWaterMarkFile(team, env)
  const text = await readFileIfExists(markFile)
  let mark = 0
  if (text !== undefined && text.trim() !== '') {
    mark = Number(text.trim())
    if (!Number.isSafeInteger(mark) || mark < 0) {
      const movedTo = await moveAside(markFile)
      throw new CorruptFileError(markFile, `not a whole number: ${JSON.stringify(text.slice(0, 40))}`, { movedTo })
    }
  }
  let names: string[] = []
  try {
    names = await fs.readdir(tasksDir(team, env))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  for (const n of names) {
    // Moved-aside files keep their id in use too: `<id>.json.corrupt-…`.
    const m = /^(0|[1-9][0-9]*)\.json(\.corrupt-.*)?$/.exec(n)
    if (m) mark = Math.max(mark, Number(m[1]))
  }
  return mark
}

/** Adds `id` to `side` of task `other` under that task's lock. */
async function linkSide(team: string, other: string, side: 'blocks' | 'blockedBy', id: string, env?: Env): Promise<void> {
  const file = taskPath(team, other, env)
  await withFileLock(file, async () => {
    const task = await readJsonForWrite(file, Task, OWN_FILE)
    if (!task) return // deleted meanwhile: nothing left to link
    if (task[side].includes(id)) return
    task[side] = [...task[side], id]
    await atomicWriteJson(file, task)
  })
}

function mergeMetadata(current: Record<string, unknown> | undefined, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete merged[k]
    else merged[k] = v
  }
  return merged
}

function validateOwner(owner: string): void {
  // Claude Code may record an agentId (`name@team`); both halves must be valid names.
  const [name, team, ...rest] = owner.split('@')
  if (rest.length) throw new UsageError(`invalid owner ${JSON.stringify(owner)}`)
  validateAgentName(name)
  if (team !== undefined) validateAgentName(team)
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)]
}

function taskNotFound(team: string, id: string): SwarmError {
  return new NotFoundError(`team ${team} has no task ${id}`, { hint: `see "swarm tasks ${team} list"` })
}
