import fs from 'node:fs'
import type { Command } from 'commander'
import type { MemberStatus, TeamStatus } from '../supervisor/status.js'
import { cachedShare, percent } from '../agent/pricing.js'
import type { MemberReport, TeamReport } from '../leader/team-report.js'
import { paintAgent } from '../util/colors.js'
import { colors, printJson, println, table } from './output.js'

export interface StatusCommandOptions {
  json?: boolean
  watch?: boolean
}

/** `--watch` redraws on file events; this slow sweep catches a process that died silently. */
const WATCH_SWEEP_MS = 2_000
/** Events come in bursts (a turn writes state, transcript and inboxes); one redraw per burst. */
const WATCH_DEBOUNCE_MS = 100

/** `swarm status <team>` */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('per member: state, backend and pane, model, last activity, unread messages, pending requests, task, tokens and cost')
    .argument('<team>', 'team name')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw as the team changes, until Ctrl-C')
    .action((team: string, opts: StatusCommandOptions) => runStatus(team, opts))
}

export async function runStatus(team: string, opts: StatusCommandOptions): Promise<void> {
  const [{ teamReport }, { teamDir }] = await Promise.all([import('../leader/team-report.js'), import('../home/paths.js')])
  const render = async () => {
    const report = await teamReport(team)
    if (opts.json) process.stdout.write(JSON.stringify(report, null, opts.watch ? 0 : 2) + '\n')
    else {
      if (opts.watch) process.stdout.write('\x1b[H\x1b[2J')
      println(formatReport(report))
    }
  }
  await render()
  if (!opts.watch) return
  let timer: NodeJS.Timeout | undefined
  let chain = Promise.resolve()
  const schedule = () => {
    clearTimeout(timer)
    timer = setTimeout(() => void (chain = chain.then(render).catch((err) => println(colors.red(String(err))))), WATCH_DEBOUNCE_MS)
  }
  const watcher = fs.watch(teamDir(team), { recursive: true }, schedule)
  const sweep = setInterval(schedule, WATCH_SWEEP_MS)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    watcher.on('error', () => resolve()) // the team was deleted
  })
  watcher.close()
  clearInterval(sweep)
  clearTimeout(timer)
}

export function formatReport(r: TeamReport): string {
  const rows = [['NAME', 'STATE', 'BACKEND', 'PANE', 'MODEL', 'LAST SEEN', 'UNREAD', 'ASKS', 'TASK', 'TOKENS', 'CACHED', 'COST']]
  for (const m of r.members) {
    rows.push([
      m.name,
      m.status + (m.state === 'exited' && m.exitCode !== undefined && m.exitCode !== 0 ? ` (code ${m.exitCode})` : ''),
      m.backend ?? '-',
      m.pane || '-',
      m.model ?? '-',
      m.lastActivity ? ago(m.lastActivity) : '-',
      String(m.unread),
      String(m.pendingRequests),
      m.currentTask ? `#${m.currentTask}` : '-',
      m.tokens ? `${kilo(m.tokens.input + m.tokens.cacheRead + m.tokens.cacheWrite)}/${kilo(m.tokens.output)}` : '-',
      m.tokens ? percent(cachedShare({ inputTokens: m.tokens.input, outputTokens: m.tokens.output, cacheReadTokens: m.tokens.cacheRead, cacheWriteTokens: m.tokens.cacheWrite })) : '-',
      m.costUsd !== undefined ? `$${m.costUsd.toFixed(4)}` : '-',
    ])
  }
  const lines = table(rows).split('\n')
  const t = r.tasks
  return [
    `team ${r.team} — tasks: ${t.pending} pending, ${t.inProgress} in progress, ${t.completed} completed`,
    lines[0],
    ...r.members.map((m, i) => paintAgent(colors, m.color, m.name) + paintState(m, lines[i + 1].slice(m.name.length))),
    ...formatWorktrees(r),
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
      const line = `  ${w.member ?? `${w.name} (kept, no member)`}  ${w.path ?? '(branch only)'}  ${w.branch}  ${state}`
      return w.member || w.clean ? line : colors.yellow(line)
    }),
    ...(r.problems ?? []).map((p) => colors.red(`  ${p}`)),
  ]
}

function paintState(m: MemberReport, rest: string): string {
  if (m.status === 'dead') return colors.red(rest)
  if (m.status === 'waiting') return colors.magenta(rest)
  return rest
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000))
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`
}

function kilo(n: number): string {
  return n < 1000 ? String(n) : `${(n / 1000).toFixed(1)}k`
}

/** The process view only (the leader's /status falls back to it). */
export function formatStatus(status: TeamStatus): string {
  const rows = [['NAME', 'BACKEND', 'PANE', 'STATE']]
  for (const m of status.members) rows.push([m.name, m.backend ?? '-', m.pane || '-', stateText(m)])
  const lines = table(rows).split('\n')
  return [`team ${status.team}`, lines[0], ...status.members.map((m, i) => paintAgent(colors, m.color, m.name) + lines[i + 1].slice(m.name.length))].join('\n')
}

function stateText(m: MemberStatus): string {
  switch (m.state) {
    case 'alive':
      return m.pid ? `alive (pid ${m.pid})` : 'alive'
    case 'exited':
      return `exited (code ${m.exitCode})`
    case 'dead':
      return `dead: ${m.reason}`
    case 'unknown':
      return `unknown: ${m.reason}`
  }
}
