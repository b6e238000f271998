import type { Command } from 'commander'
import { formatReport } from '../leader/report-format.js'
import { colors, println, writeStdout } from '../terminal/output.js'
import { type CallContext, THIS_PROCESS } from './call-context.js'

export interface StatusCommandOptions {
  json?: boolean
  watch?: boolean
}

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

export async function runStatus(team: string, opts: StatusCommandOptions, call: CallContext = THIS_PROCESS): Promise<void> {
  const [{ teamReport }, { teamDir }] = await Promise.all([import('../leader/team-report.js'), import('../home/paths.js')])
  const render = async () => {
    const report = await teamReport(team, { env: call.env })
    if (opts.json) call.out(JSON.stringify(report, null, opts.watch ? 0 : 2) + '\n')
    else {
      if (opts.watch) writeStdout('\x1b[H\x1b[2J')
      println(formatReport(report))
    }
  }
  await render()
  if (!opts.watch) return
  // Only --watch pays for the watcher (chokidar).
  const [{ nextStopSignal }, { WATCH_INTERVALS }, { watchTree }] = await Promise.all([
    import('../process/handlers.js'),
    import('../watch/intervals.js'),
    import('../watch/tree-watch.js'),
  ])
  let chain = Promise.resolve()
  const redraw = () => {
    chain = chain.then(render).catch((err) => println(colors.red(String(err))))
  }
  const deleted = new AbortController()
  const watcher = watchTree(teamDir(team), redraw, {
    debounceMs: WATCH_INTERVALS.statusDebounce,
    sweepMs: WATCH_INTERVALS.statusSweep,
    onGone: () => deleted.abort(),
  })
  await nextStopSignal(deleted.signal) // Ctrl-C, or the team was deleted
  await watcher.close()
}
