import fs from 'node:fs/promises'
import { errorMessage } from '../errors.js'
import { teamConfigPath, teamsDir } from '../home/paths.js'
import { shortRequestId } from '../home/request-id.js'
import { cachedShare } from '../agent/pricing.js'
import { teamReport } from '../leader/team-report.js'
import { listRequests } from '../permissions/requests/broker.js'
import { readTeam } from '../teams/team-store.js'
import { terminalSafe } from '../terminal/neutralize.js'

/**
 * What the page shows of every team on this machine, read from the files `swarm status --watch`
 * and `swarm perms` read (teamReport, listRequests): members with their state and spend, and
 * every pending request with its whole input. Text a teammate or a model wrote is neutralised
 * here; the page only ever sets it as text.
 */

export interface WebMember {
  name: string
  status: string
  backend: string
  /** A pane backend's pane id ('' for an in-process teammate): the page offers its screen. */
  pane: string
  task?: string
  detail?: string
  model?: string
  tokens?: { input: number; output: number; cacheRead: number; cacheWrite: number }
  /** Cache reads over all input tokens, 0..1. */
  cachedShare?: number
  costUsd?: number
  maxCostUsd?: number
  unread: number
  pending: number
}

export interface WebRequest {
  id: string
  shortId: string
  kind: 'permission' | 'plan'
  agent: string
  toolName: string
  /** The whole input, neutralised line by line: never cut. */
  inputLines: string[]
  description: string
  /** The rules "always" would add. */
  always: string[]
  createdAt: number
}

export interface WebTeam {
  team: string
  members: WebMember[]
  requests: WebRequest[]
  costUsd: number
  maxCostUsd?: number
  tasks: { pending: number; inProgress: number; completed: number }
  problems: string[]
}

export interface Snapshot {
  teams: WebTeam[]
}

const one = (s: string) => terminalSafe(s, { singleLine: true })

/** The teams under this home that have a config.json, sorted by name. */
export async function teamNames(env: NodeJS.ProcessEnv): Promise<string[]> {
  const names = await fs.readdir(teamsDir(env)).catch(() => [] as string[])
  const found = await Promise.all(names.map(async (n) => ((await fs.stat(teamConfigPath(n, env)).catch(() => undefined)) ? n : undefined)))
  return found.filter((n): n is string => n !== undefined).sort()
}

export async function teamSnapshot(team: string, env: NodeJS.ProcessEnv): Promise<WebTeam> {
  const [config, report, listing] = await Promise.all([readTeam(team, env), teamReport(team, { env }), listRequests(team, { env })])
  const members = report.members.map(
    (m): WebMember => ({
      name: m.name,
      status: m.status,
      backend: m.backend ?? 'unknown',
      pane: m.backend && m.backend !== 'in-process' ? m.pane : '',
      ...(m.currentTask ? { task: one(m.currentTask) } : {}),
      ...(m.detail ? { detail: one(m.detail) } : {}),
      ...(m.model ? { model: one(m.model) } : {}),
      ...(m.tokens
        ? {
            tokens: m.tokens,
            cachedShare: cachedShare({
              inputTokens: m.tokens.input,
              outputTokens: m.tokens.output,
              cacheReadTokens: m.tokens.cacheRead,
              cacheWriteTokens: m.tokens.cacheWrite,
            }),
          }
        : {}),
      ...(m.costUsd !== undefined ? { costUsd: m.costUsd } : {}),
      ...(m.budget?.maxCostUsd !== undefined ? { maxCostUsd: m.budget.maxCostUsd } : {}),
      unread: m.unread,
      pending: m.pendingRequests,
    }),
  )
  return {
    team,
    members,
    requests: listing.requests.map((r) => ({
      id: r.id,
      shortId: shortRequestId(r.id),
      kind: r.kind,
      agent: one(r.agent),
      toolName: one(r.toolName),
      inputLines: r.inputLines,
      description: r.description,
      always: r.suggestions.map(one),
      createdAt: r.createdAt,
    })),
    costUsd: members.reduce((sum, m) => sum + (m.costUsd ?? 0), 0),
    ...(config.budget?.maxCostUsd !== undefined ? { maxCostUsd: config.budget.maxCostUsd } : {}),
    tasks: report.tasks,
    problems: [...listing.problems, ...(report.problems ?? [])].map(one),
  }
}

/** Every team; a team that cannot be read (deleted meanwhile, a corrupt file) is shown with its problem. */
export async function snapshot(env: NodeJS.ProcessEnv): Promise<Snapshot> {
  const names = await teamNames(env)
  const teams = await Promise.all(
    names.map((team) =>
      teamSnapshot(team, env).catch(
        (err): WebTeam => ({
          team,
          members: [],
          requests: [],
          costUsd: 0,
          tasks: { pending: 0, inProgress: 0, completed: 0 },
          problems: [one(errorMessage(err))],
        }),
      ),
    ),
  )
  return { teams }
}
