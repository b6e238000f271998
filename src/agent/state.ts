import path from 'node:path'
import { z } from 'zod'
import { agentDir } from '../home/paths.js'
import { atomicWriteJson, pathExists, readJsonFile } from '../util/fs.js'

export const AgentStatus = z.enum(['starting', 'working', 'idle', 'waiting', 'exited', 'dead'])
export type AgentStatus = z.infer<typeof AgentStatus>

/** `agents/<name>/state.json`, written only by the agent itself. */
export const AgentState = z.looseObject({
  pid: z.number().optional(),
  status: AgentStatus,
  model: z.string().optional(),
  modelSource: z.string().optional(),
  mode: z.string().optional(),
  heartbeat: z.number().optional(),
  lastActivity: z.number().optional(),
  currentTask: z.string().optional(),
  detail: z.string().optional(),
  exitCode: z.number().optional(),
  usage: z
    .object({
      inputTokens: z.number(),
      outputTokens: z.number(),
      cacheReadTokens: z.number(),
      cacheWriteTokens: z.number(),
      cacheWrite1hTokens: z.number().optional(),
    })
    .optional(),
  costUsd: z.number().optional(),
  /** The agent's spending limit, as raised so far. */
  budget: z.object({ maxCostUsd: z.number().optional(), maxTokens: z.number().optional() }).optional(),
  turns: z.number().optional(),
  /** An agent-CLI teammate: how its whole process tree runs (`sandboxed`, `unavailable`, `unsandboxed`). */
  sandbox: z.enum(['sandboxed', 'unavailable', 'unsandboxed']).optional(),
})
export type AgentState = z.infer<typeof AgentState>

export function statePath(team: string, name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentDir(team, name, env), 'state.json')
}

export async function readAgentState(team: string, name: string, env?: NodeJS.ProcessEnv): Promise<AgentState | undefined> {
  return readJsonFile(statePath(team, name, env), AgentState)
}

/** Holds an agent's state in memory and writes it atomically on every change. */
export class AgentStateFile {
  private state: AgentState
  private writing: Promise<void> = Promise.resolve()
  constructor(
    readonly file: string,
    initial: AgentState,
  ) {
    this.state = initial
  }

  get current(): AgentState {
    return this.state
  }

  private created = false

  /**
   * Merges `patch` and queues a write; writes are serialized so the last one wins on disk. Only
   * the first write creates the directory: once the team is deleted, a late write (an agent on
   * its way out) must not bring its directory back.
   */
  update(patch: Partial<AgentState>): Promise<void> {
    this.state = { ...this.state, ...patch, heartbeat: Date.now() }
    const snapshot = this.state
    this.writing = this.writing.then(async () => {
      if (!this.created) {
        await atomicWriteJson(this.file, snapshot)
        this.created = true
        return
      }
      if (!(await pathExists(path.dirname(this.file)))) return
      await atomicWriteJson(this.file, snapshot).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err // ENOENT: the team was deleted under us
      })
    })
    return this.writing
  }
}
