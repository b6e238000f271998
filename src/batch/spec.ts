import fs from 'node:fs/promises'
import YAML from 'yaml'
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { validateName } from '../home/paths.js'

/**
 * A batch file (`swarm batch <team> --from tasks.yaml`): 5–30 independent subtasks, each with a
 * name (its branch is `swarm/<team>/batch-<name>`) and a self-contained prompt.
 *
 * ```yaml
 * tasks:
 *   - name: rename-login
 *     prompt: In src/auth/login.ts rename login() to signIn() and update its callers.
 *     agent_type: general-purpose   # optional
 *     model: sonnet                 # optional
 * ```
 */

export const MIN_SUBTASKS = 5
export const MAX_SUBTASKS = 30

export const Subtask = z.strictObject({
  name: z.string().refine((n) => safeName(n), { message: 'a name is 1–64 of A-Z a-z 0-9 . _ -, not starting with . or -' }),
  prompt: z.string().min(1),
  agent_type: z.string().optional(),
  model: z.string().optional(),
})
export type Subtask = z.infer<typeof Subtask>

export const BatchFile = z.union([z.strictObject({ tasks: z.array(Subtask) }), z.array(Subtask).transform((tasks) => ({ tasks }))])

function safeName(n: string): boolean {
  try {
    validateName(n, 'agent')
    return true
  } catch {
    return false
  }
}

/** Checks a list of subtasks: the count (5–30) and distinct names. */
export function checkSubtasks(tasks: Subtask[], source: string): Subtask[] {
  if (tasks.length < MIN_SUBTASKS || tasks.length > MAX_SUBTASKS) {
    throw new UsageError(`${source} has ${tasks.length} subtasks; a batch takes ${MIN_SUBTASKS}–${MAX_SUBTASKS}`, {
      hint: tasks.length < MIN_SUBTASKS ? 'give a few subtasks to one agent instead (Agent, or swarm spawn)' : 'split it into several batches',
    })
  }
  const seen = new Set<string>()
  for (const t of tasks) {
    if (seen.has(t.name))
      throw new UsageError(`${source}: two subtasks are named ${JSON.stringify(t.name)}`, {
        hint: 'give every subtask its own name (it names its branch)',
      })
    seen.add(t.name)
  }
  return tasks
}

export async function loadBatchFile(file: string): Promise<Subtask[]> {
  const text = await fs.readFile(file, 'utf8').catch((err: Error) => {
    throw new UsageError(`cannot read ${file}: ${err.message}`, { hint: 'give the path of a YAML file with a `tasks:` list' })
  })
  let value: unknown
  try {
    value = YAML.parse(text)
  } catch (err) {
    throw new UsageError(`${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`, { hint: 'fix the file' })
  }
  const parsed = BatchFile.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new UsageError(`${file}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`, {
      hint: 'each subtask needs a name and a prompt (see swarm batch --help)',
    })
  }
  return checkSubtasks(parsed.data.tasks, file)
}
