import { z } from 'zod'

export const TaskStatus = z.enum(['pending', 'in_progress', 'completed'])
export type TaskStatus = z.infer<typeof TaskStatus>

/** `<root>/tasks/<team>/<id>.json` */
export const Task = z.looseObject({
  id: z.string(),
  subject: z.string(),
  description: z.string(),
  activeForm: z.string().optional(),
  owner: z.string().optional(),
  status: TaskStatus,
  blocks: z.array(z.string()).default([]),
  blockedBy: z.array(z.string()).default([]),
  metadata: z.record(z.string(), z.unknown()).optional(),
})
export type Task = z.infer<typeof Task>
