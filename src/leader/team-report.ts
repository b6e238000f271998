import fs from 'node:fs/promises'
import path from 'node:path'
import { readMemberState, type MemberState } from '../store/member-state.js'
import { teamStatus, type MemberStatus } from '../supervisor/status.js'
import type { InProcessExecutor } from '../backends/types.js'
import { readInbox } from '../mailbox/inbox.js'
import { listPending } from '../asks/store.js'
import { inboxPath, LEAD_NAME, rootDir } from '../home/paths.js'
import { claudeLeadAlive, claudeLeadOf } from '../teams/claude-lead.js'
import { importInboxRequests } from '../permissions/requests/inbox-requests.js'
import { readTeam } from '../teams/team-store.js'
import type { TeamMember } from '../teams/types.js'
import type { WorktreeSummary } from '../worktrees/team-worktrees.js'
import { listTasks } from '../tasks/task-store.js'
import { isAlive } from '../process/liveness.js'

/** What `swarm status` shows for one member. */
export interface MemberReport extends MemberStatus {
  /** starting | working | idle | waiting | exited | dead, or the process state for a non-swarm command. */
  status: string
  model?: string
  mode?: string
  lastActivity?: number
  unread: number
  pendingRequests: number
  currentTask?: string
  tokens?: { input: number; output: number; cacheRead: number; cacheWrite: number }
  costUsd?: number
  /** Its spending limit, when it has one. */
  budget?: { maxCostUsd?: number; maxTokens?: number }
  detail?: string
  /** An agent-CLI teammate's sandbox, as its pane wrapper set it up. */
  sandbox?: 'sandboxed' | 'unavailable' | 'unsandboxed'
}

export interface TeamReport {
  team: string
  members: MemberReport[]
  tasks: { pending: number; inProgress: number; completed: number }
  /** The team's worktrees (also kept ones of members gone) with what is in them. */
  worktrees: Array<WorktreeSummary & { member: string | null }>
  /** Worktree records that could not be read. */
  problems?: string[]
}

/**
 * Everything `swarm status` shows: the backend's view of each process (one batched call per
 * backend) joined with what each agent writes in its state.json, its unread messages, its
 * pending requests and its task.
 */
export async function teamReport(team: string, opts: { env?: NodeJS.ProcessEnv; inProcess?: InProcessExecutor } = {}): Promise<TeamReport> {
  const env = opts.env ?? process.env
  const config = await readTeam(team, env)
  const claudeLead = claudeLeadOf(config)
  // The tmux call and the files are independent: read them all at once.
  const [base, pending, tasks, trees, files] = await Promise.all([
    teamStatus(team, { env, config, ...(opts.inProcess ? { inProcess: opts.inProcess } : {}) }),
    importInboxRequests(config, env)
      .then(() => listPending(team, { env }))
      .then((r) => r.requests)
      .catch(() => []),
    listTasks(team, env).catch(() => []),
    teamWorktreeSummaries(team, config.members, env),
    Promise.all(
      config.members.map((m) =>
        Promise.all([readMemberState(team, m.name, env).catch(() => undefined), readInbox(inboxPath(team, m.name, env)).catch(() => [])]),
      ),
    ),
  ])
  const members = base.members.map((m, k): MemberReport => {
    const [state, inbox] = files[k]
    const task = tasks.find((t) => t.status === 'in_progress' && (t.owner === m.name || t.owner === m.agentId))
    const usage = state?.usage
    const asks = pending.filter((p) => p.agent === m.name).length
    const entry = config.members.find((c) => c.name === m.name)
    // Only a member on its own inbox (Claude Code) sets isActive as it works; for any other it is swarm's "meant to run".
    const isActive = entry?.ownsInbox === true || claudeLead ? entry?.isActive : undefined
    // A Claude Code lead runs in its own terminal: its process tells whether it lives.
    const status =
      m.name === LEAD_NAME && claudeLead
        ? claudeLeadAlive(claudeLead)
          ? 'alive'
          : 'exited'
        : memberState(m, state, { asks, ...(isActive !== undefined ? { isActive } : {}) })
    return {
      ...m,
      status,
      ...(state?.model ? { model: state.model } : {}),
      ...(state?.mode ? { mode: state.mode } : {}),
      ...(state?.lastActivity ? { lastActivity: state.lastActivity } : {}),
      ...(state?.detail ? { detail: state.detail } : {}),
      ...(state?.sandbox ? { sandbox: state.sandbox } : {}),
      unread: inbox.filter((e) => !e.read).length,
      pendingRequests: asks,
      ...(task || state?.currentTask ? { currentTask: task?.id ?? state?.currentTask } : {}),
      ...(usage
        ? { tokens: { input: usage.inputTokens, output: usage.outputTokens, cacheRead: usage.cacheReadTokens, cacheWrite: usage.cacheWriteTokens } }
        : {}),
      ...(state?.costUsd !== undefined ? { costUsd: state.costUsd } : {}),
      ...(state?.budget ? { budget: state.budget } : {}),
    }
  })
  return {
    team,
    members,
    worktrees: trees.worktrees,
    ...(trees.problems.length ? { problems: trees.problems } : {}),
    tasks: {
      pending: tasks.filter((t) => t.status === 'pending').length,
      inProgress: tasks.filter((t) => t.status === 'in_progress').length,
      completed: tasks.filter((t) => t.status === 'completed').length,
    },
  }
}

/**
 * The member's lifecycle state (docs/architecture.md §12): the process view wins when the process is gone
 * (a clean exit is `exited`, anything else `dead`); while it lives, its state file
 * (`store/member-state.ts`). A Claude Code teammate's, if any (its wrapper writes `dead` when its
 * sandbox could not be set up, its metering proxy `working` with its spend), does not say what it
 * does: it is told by its signals — a pending request makes
 * it `waiting`, else the `isActive` it sets on its member entry `working` or `idle`.
 */
export function memberState(m: MemberStatus, state: MemberState | undefined, signals: { asks?: number; isActive?: boolean } = {}): string {
  const cleanExit = state?.status === 'exited'
  if (m.state === 'exited') return cleanExit || m.exitCode === 0 ? 'exited' : 'dead'
  if (m.state === 'dead') return cleanExit ? 'exited' : m.reason === 'never started' ? 'not started' : 'dead'
  if (m.state === 'unknown') {
    // In-process members (and a leader not found in tmux): their state file and its pid tell.
    if (!state) return m.name === LEAD_NAME ? 'not running' : 'not started'
    if (state.status === 'exited') return 'exited'
    return state.pid !== undefined && isAlive(state.pid) ? state.status : 'dead'
  }
  // A CLI that keeps its own state in the team file (Claude Code's isActive) is judged by it.
  if (signals.isActive !== undefined) return signals.asks ? 'waiting' : signals.isActive ? 'working' : 'idle'
  if (state && state.status !== 'exited') return state.status
  if (state) return 'alive'
  if (signals.asks) return 'waiting'
  return 'alive'
}

/** Only a team that has worktree records pays for git (and for loading the worktree modules). */
async function teamWorktreeSummaries(
  team: string,
  members: TeamMember[],
  env: NodeJS.ProcessEnv,
): Promise<Pick<TeamReport, 'worktrees'> & { problems: string[] }> {
  const dir = path.join(rootDir(env), 'worktrees', team)
  if (!(await fs.stat(dir).catch(() => undefined))) return { worktrees: [], problems: [] }
  const { listTeamWorktrees, summarizeWorktree, worktreeUsersOf } = await import('../worktrees/team-worktrees.js')
  const listing = await listTeamWorktrees(team, { env })
  const users = worktreeUsersOf(members)
  return { worktrees: listing.worktrees.map((w) => ({ ...summarizeWorktree(w), member: users.get(w.path) ?? null })), problems: listing.problems }
}
