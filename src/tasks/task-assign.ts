import { SwarmError, errorMessage } from '../errors.js'
import { encodeStructured } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { OWN_FILE, readJsonFile } from '../util/fs.js'
import { LEAD_NAME, teamConfigPath } from '../home/paths.js'
import { ownerName } from './task-graph.js'
import { TeamFile } from '../teams/types.js'
import { sendTeamMessage } from '../teams/messaging.js'
import type { Task } from './types.js'

/**
 * Tells a task's new owner about it with a `task_assignment` message in its inbox, sent the one
 * way team messages go (teams/messaging): signed when team-lead assigns, so a key-holding teammate
 * sees a verified order, and logged for a recipient that consumes its own inbox.
 * Nothing is sent when the owner assigned the task to itself (a claim), or when the owner is
 * not a member of the team: owners are free-form strings in Claude Code's task files, and a
 * task list may outlive its team.
 */
export async function notifyAssignment(team: string, task: Task, by: string | undefined, env?: NodeJS.ProcessEnv): Promise<InboxMessage | undefined> {
  const to = ownerName(task.owner, team)
  const assignedBy = by ?? LEAD_NAME
  if (to === undefined || to === assignedBy) return undefined
  const config = await readJsonFile(teamConfigPath(team, env), TeamFile, OWN_FILE)
  if (!config) return undefined
  const members = config.members.map((m) => m.name)
  if (!members.includes(to)) return undefined
  const from = members.includes(assignedBy) ? assignedBy : LEAD_NAME
  const text = encodeStructured({
    type: 'task_assignment',
    taskId: task.id,
    subject: task.subject,
    description: task.description,
    assignedBy,
    timestamp: new Date().toISOString(),
  })
  try {
    const [sent] = await sendTeamMessage({ team, from, to, text, ...(env ? { env } : {}) })
    return sent
  } catch (err) {
    throw new SwarmError(
      'SWARM_ASSIGNMENT_NOT_SENT',
      `task ${task.id} is assigned to ${to}, but the task_assignment message could not be delivered: ${errorMessage(err)}`,
      { cause: err, exitCode: err instanceof SwarmError ? err.exitCode : undefined, hint: `tell ${to} with "swarm send ${team} ${to} …"` },
    )
  }
}
