import { LEAD_NAME } from '../home/paths.js'
import { cachedShare, percent } from '../agent/pricing.js'
import { paintAgent } from '../terminal/colors.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { colors, table } from '../terminal/output.js'
import type { MemberReport, TeamReport } from './team-report.js'

/**
 * A team report as the text `swarm status` and the console's /status print: one row per member,
 * then the team's worktrees. Names and states are coloured; widths count only visible text; every
 * cell is shown terminal-safe (a model or teammate may have written it).
 */
export function formatReport(r: TeamReport): string {
  const rows = [['NAME', 'STATE', 'BACKEND', 'PANE', 'MODEL', 'LAST SEEN', 'UNREAD', 'ASKS', 'TASK', 'TOKENS', 'CACHED', 'COST']]
  for (const m of r.members) {
    rows.push([
      m.name,
      m.status +
        (m.state === 'exited' && m.exitCode !== undefined && m.exitCode !== 0 ? ` (code ${m.exitCode})` : '') +
        // An agent CLI outside the OS sandbox (no bwrap here, or sandbox.enabled false) says so.
        (m.sandbox && m.sandbox !== 'sandboxed' ? ' (unsandboxed)' : ''),
      m.backend ?? '-',
      m.pane || '-',
      m.model ?? '-',
      m.lastActivity ? ago(m.lastActivity) : '-',
      String(m.unread),
      String(m.pendingRequests),
      m.currentTask ? `#${m.currentTask}` : '-',
      (m.tokens ? `${kilo(m.tokens.input + m.tokens.cacheRead + m.tokens.cacheWrite)}/${kilo(m.tokens.output)}` : '-') +
        (m.budget?.maxTokens !== undefined ? ` of ${kilo(m.budget.maxTokens)}` : ''),
      m.tokens
        ? percent(
            cachedShare({
              inputTokens: m.tokens.input,
              outputTokens: m.tokens.output,
              cacheReadTokens: m.tokens.cacheRead,
              cacheWriteTokens: m.tokens.cacheWrite,
            }),
          )
        : '-',
      // Spend against budget, when it has one.
      (m.costUsd !== undefined ? `$${m.costUsd.toFixed(4)}` : '-') +
        (m.budget?.maxCostUsd !== undefined ? ` of $${m.budget.maxCostUsd.toFixed(2)}` : ''),
    ])
  }
  const lines = table(rows).split('\n')
  const t = r.tasks
  return [
    `team ${r.team} — tasks: ${t.pending} pending, ${t.inProgress} in progress, ${t.completed} completed`,
    lines[0],
    ...r.members.map((m, i) => paintAgent(colors, m.color, one(m.name)) + paintState(m, lines[i + 1].slice(one(m.name).length))),
    ...formatWorktrees(r),
  ].join('\n')
}

/**
 * The console's `/team`: one short line per teammate, the lead left out — state, the window its
 * pane is in (a page `<team>+N` is where to look), its task, when it was last active — fitting
 * the leader's 60 columns at 64 teammates, where the full table wraps.
 */
export function formatOverview(r: TeamReport): string {
  const mates = r.members.filter((m) => m.name !== LEAD_NAME)
  const counts = new Map<string, number>()
  for (const m of mates) counts.set(m.status, (counts.get(m.status) ?? 0) + 1)
  const rows = mates.map((m) => [
    m.name,
    m.status,
    m.window ?? '-',
    m.currentTask ? `#${m.currentTask}` : '-',
    m.lastActivity ? ago(m.lastActivity) : '-',
  ])
  const lines = rows.length ? table(rows).split('\n') : []
  return [
    `${mates.length} teammate${mates.length === 1 ? '' : 's'}: ${[...counts].map(([s, n]) => `${n} ${s}`).join(', ') || 'none'}`,
    ...mates.map((m, i) => paintAgent(colors, m.color, one(m.name)) + paintState(m, lines[i].slice(one(m.name).length))),
  ].join('\n')
}

/** One line per worktree of the team; a kept one (work in it, no member) stands out. */
function formatWorktrees(r: TeamReport): string[] {
  if (!r.worktrees.length) return []
  return [
    'worktrees:',
    ...r.worktrees.map((w) => {
      const files = w.uncommitted.length ? `${w.uncommitted.length} uncommitted file${w.uncommitted.length === 1 ? '' : 's'}` : ''
      const commits = w.unmergedCount ? `${w.unmergedCount} unmerged commit${w.unmergedCount === 1 ? '' : 's'}` : ''
      const state = [files, commits].filter(Boolean).join(', ') || 'clean'
      const line = one(`  ${w.member ?? `${w.name} (kept, no member)`}  ${w.path ?? '(branch only)'}  ${w.branch}  ${state}`)
      return w.member || w.clean ? line : colors.yellow(line)
    }),
    ...(r.problems ?? []).map((p) => colors.red(`  ${one(p)}`)),
  ]
}

function paintState(m: MemberReport, rest: string): string {
  if (m.status === 'dead') return colors.red(rest)
  if (m.status === 'waiting') return colors.magenta(rest)
  return rest
}

const one = (s: string) => terminalSafe(s, { singleLine: true })

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000))
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`
}

function kilo(n: number): string {
  return n < 1000 ? String(n) : `${(n / 1000).toFixed(1)}k`
}
