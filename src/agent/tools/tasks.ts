import { z } from 'zod'
import { claimTask, createTask, getTask, listTasks, updateTask } from '../../tasks/task-store.js'
import type { Task } from '../../tasks/types.js'
import { defineTool } from '../tool.js'
import type { TeamToolHost } from './send-message.js'

function render(t: Task): string {
  const deps = [
    t.blockedBy.length ? `blocked by ${t.blockedBy.map((b) => '#' + b).join(', ')}` : '',
    t.blocks.length ? `blocks ${t.blocks.map((b) => '#' + b).join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ')
  return `#${t.id} [${t.status}] ${t.subject}${t.owner ? ` (owner: ${t.owner})` : ''}${deps ? ` — ${deps}` : ''}`
}

// Module-level, shared by every member's tools: their API schemas are converted once (tool.ts toInputSchema).
const createInput = z.object({
  subject: z.string().min(1).describe('A short imperative title'),
  description: z.string().describe('What needs to be done, with enough context for whoever takes it'),
  activeForm: z.string().optional().describe('Present-continuous form shown while in progress'),
})
const getInput = z.object({ taskId: z.string() })
const listInput = z.object({})
const updateInput = z.object({
  taskId: z.string(),
  status: z.enum(['pending', 'in_progress', 'completed']).optional(),
  owner: z.string().optional(),
  subject: z.string().optional(),
  description: z.string().optional(),
  addBlocks: z.array(z.string()).optional(),
  addBlockedBy: z.array(z.string()).optional(),
})

export function createTaskTools(host: TeamToolHost) {
  const opts = { by: host.name, env: host.env }
  const TaskCreate = defineTool({
    name: 'TaskCreate',
    description: 'Create a task in the team task list. Returns its id.',
    inputSchema: createInput,
    kind: 'coordination',
    async execute(i) {
      const t = await createTask(
        host.team,
        { subject: i.subject, description: i.description, ...(i.activeForm ? { activeForm: i.activeForm } : {}) },
        opts,
      )
      return `Created task #${t.id}: ${t.subject}`
    },
  })
  const TaskGet = defineTool({
    name: 'TaskGet',
    description: 'Get one task with its full description.',
    inputSchema: getInput,
    kind: 'coordination',
    async execute(i) {
      const t = await getTask(host.team, i.taskId, host.env)
      return `${render(t)}\n\n${t.description}`
    },
  })
  const TaskList = defineTool({
    name: 'TaskList',
    description: 'List every task of the team with status, owner and dependencies.',
    inputSchema: listInput,
    kind: 'coordination',
    async execute() {
      const tasks = await listTasks(host.team, host.env)
      return tasks.length ? tasks.map(render).join('\n') : 'No tasks.'
    },
  })
  const TaskUpdate = defineTool({
    name: 'TaskUpdate',
    description:
      'Update a task: status (pending | in_progress | completed), owner (claim with your own name), subject, description, or dependencies.',
    inputSchema: updateInput,
    kind: 'coordination',
    async execute(i) {
      if (i.owner === host.name && i.status !== 'completed') {
        const claim = await claimTask(host.team, i.taskId, host.name, { env: host.env })
        if (!claim.ok) return { content: `Cannot claim #${i.taskId}: ${claim.reason}`, isError: true }
      }
      const t = await updateTask(
        host.team,
        i.taskId,
        {
          ...(i.status ? { status: i.status } : {}),
          ...(i.owner !== undefined ? { owner: i.owner } : {}),
          ...(i.subject ? { subject: i.subject } : {}),
          ...(i.description ? { description: i.description } : {}),
          ...(i.addBlocks ? { addBlocks: i.addBlocks } : {}),
          ...(i.addBlockedBy ? { addBlockedBy: i.addBlockedBy } : {}),
        },
        opts,
      )
      if (i.status === 'completed') host.turnLog.completedTaskIds.push(t.id)
      return `Updated ${render(t)}`
    },
  })
  return [TaskCreate, TaskGet, TaskList, TaskUpdate]
}
