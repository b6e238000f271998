import { claimTask, listTasks } from '../tasks/task-store.js'

/**
 * Auto-claim for an idle teammate with an empty inbox: the first pending, unowned task whose
 * blockers are all completed, claimed atomically (never while it already works on one).
 */
export async function claimNextTask(o: {
  team: string
  name: string
  env: NodeJS.ProcessEnv
  warn(line: string): void
}): Promise<{ id: string; prompt: string } | undefined> {
  const tasks = await listTasks(o.team, o.env).catch((err: Error) => {
    o.warn(`cannot read the task list: ${err.message}`)
    return []
  })
  const done = new Set(tasks.filter((t) => t.status === 'completed').map((t) => t.id))
  if (tasks.some((t) => t.owner === o.name && t.status === 'in_progress')) return undefined
  const next = tasks.find((t) => t.status === 'pending' && !t.owner && t.blockedBy.every((b) => done.has(b)))
  if (!next) return undefined
  const claim = await claimTask(o.team, next.id, o.name, { checkAgentBusy: true, env: o.env })
  if (!claim.ok) return undefined
  const prompt =
    `You claimed task #${next.id}: ${next.subject}\n\n${next.description}\n\n` +
    `Do it, then mark it completed with TaskUpdate {"taskId":"${next.id}","status":"completed"} and report to team-lead with SendMessage.`
  return { id: next.id, prompt }
}
