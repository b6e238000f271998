import type { Command } from 'commander'
import { createModelClient, modelConfigured } from '../agent/client.js'
import { createOutput } from '../agent/render.js'
import { batchPermissions } from '../batch/permissions.js'
import { formatBatchReport, subtaskLine } from '../batch/report.js'
import { DEFAULT_PARALLEL, runBatch } from '../batch/run.js'
import { storeMeter } from '../agent/store-meter.js'
import { loadBatchFile, MAX_SUBTASKS } from '../batch/batch-file.js'
import { ExitCode, SwarmError, UsageError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import { readTeam } from '../teams/team-store.js'
import { PermissionModeName } from '../permissions/rules/modes.js'
import { printJson, println } from '../terminal/output.js'
import { shutdownSignal } from './signals.js'
// Installs the agent CLIs' protected config dirs, which its permission checks and Bash sandbox read.
import '../adapters/registry.js'

/** `swarm batch <team> --from tasks.yaml`: independent subtasks, each in its own worktree and branch. */
export function registerBatchCommand(program: Command): void {
  program
    .command('batch <team>')
    .description(
      'run 5–30 independent subtasks in parallel, each in a git worktree and branch of its own, each ending in a commit; then an aggregate report',
    )
    .requiredOption('--from <file>', 'YAML: tasks: [{name, prompt, agentType?, model?}]')
    .option('--parallel <n>', `subtasks at a time (1–${MAX_SUBTASKS})`, String(DEFAULT_PARALLEL))
    .option('--mode <mode>', 'permission mode of the subtasks; what it would ask is denied (nobody answers in a batch)', 'acceptEdits')
    .option('--model <model>', 'model of the subtasks (default: the usual resolution)')
    .option('--json', 'print the report as JSON')
    .action((team: string, opts: BatchCommandOptions) => batchCommand(team, opts))
}

interface BatchCommandOptions {
  from: string
  parallel: string
  mode: string
  model?: string
  json?: boolean
}

export async function batchCommand(team: string, opts: BatchCommandOptions): Promise<void> {
  const env = process.env
  const parallel = Number(opts.parallel)
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_SUBTASKS)
    throw new UsageError(`--parallel ${opts.parallel} is not a number from 1 to ${MAX_SUBTASKS}`)
  const mode = PermissionModeName.safeParse(opts.mode)
  if (!mode.success)
    throw new UsageError(`invalid --mode ${JSON.stringify(opts.mode)}`, { hint: `use one of ${PermissionModeName.options.join(', ')}` })
  const config = await readTeam(team, env)
  const tasks = await loadBatchFile(opts.from)
  if (!modelConfigured(env))
    throw new UsageError('no model is configured, so the subtasks could not think', {
      hint: 'set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible server)',
    })
  const repoDir = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  const abort = shutdownSignal()
  try {
    const report = await runBatch({
      team,
      repoDir,
      env,
      client: createModelClient(env),
      tasks: opts.model ? tasks.map((t) => ({ model: opts.model, ...t })) : tasks,
      parallel,
      ...(await batchPermissions(repoDir, env, mode.data)),
      parent: LEAD_NAME,
      // The subtasks' requests are the lead's spend, against its budget and the team's.
      meter: storeMeter({ team, name: LEAD_NAME, env }),
      signal: abort.signal,
      // Tool lines go to stderr, so that --json keeps stdout to the report.
      output: createOutput({ stream: process.stderr, prefix: 'batch' }),
      ...(opts.json ? {} : { onResult: (r) => println(subtaskLine(r)) }),
    })
    if (opts.json) printJson(report)
    else println(`\n${formatBatchReport(report)}`)
    if (report.failed) {
      throw new SwarmError('SWARM_BATCH_FAILED', `${report.failed} of ${report.subtasks.length} subtasks failed`, {
        exitCode: ExitCode.processFailure,
        hint: 'the report names them; their worktrees are kept where they hold work (swarm worktrees)',
      })
    }
  } finally {
    abort.dispose()
  }
}
