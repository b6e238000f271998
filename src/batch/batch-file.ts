import { z } from 'zod'
import { UsageError } from '../errors.js'
import { validateName } from '../home/paths.js'
import { readSpecFile } from '../util/spec-file.js'

/**
 * A batch file (`swarm batch <team> --from tasks.yaml`): 5–30 independent subtasks, each with a
 * name (its branch is `swarm/<team>/batch-<name>`) and a self-contained prompt.
 *
 * ```yaml
 * tasks:
 *   - name: rename-login
 *     prompt: In src/auth/login.ts rename login() to signIn() and update its callers.
 *     agentType: general-purpose    # optional (spelled as in team files)
 *     model: sonnet                 # optional
 * ```
 */

export const MIN_SUBTASKS = 5
export const MAX_SUBTASKS = 30

export const Subtask = z.strictObject({
  name: z.string().refine((n) => safeName(n), { message: 'a name is 1–64 of A-Z a-z 0-9 . _ -, not starting with . or -' }),
  prompt: z.string().min(1),
  agentType: z.string().optional(),
  model: z.string().optional(),
})
export type Subtask = z.infer<typeof Subtask>

/** `tasks: [...]`, or the list alone. */
export const BatchFile = z.preprocess((v) => (Array.isArray(v) ? { tasks: v } : v), z.strictObject({ tasks: z.array(Subtask) }))

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

/** Reads a batch file: a bad value or an unknown key is a UsageError (exit 2) naming the file and the key. */
export async function loadBatchFile(file: string): Promise<Subtask[]> {
  const spec = await readSpecFile(file, BatchFile, 'batch file', ['tasks', ...Object.keys(Subtask.shape)])
  return checkSubtasks(spec.tasks, file)
}
