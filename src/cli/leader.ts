import type { Command } from 'commander'
import { runLeader } from '../leader/leader.js'
import { validateName } from '../home/paths.js'
import { reportError } from './errors.js'
import { leaderAnswers } from './leader-answers.js'
import { shutdownSignal } from './signals.js'
import { settingsTrust } from './trust-settings.js'

/** `swarm leader <team>` — the leader console (started in the leader pane by team create). */
export function registerLeaderCommand(program: Command): void {
  program
    .command('leader <team>')
    .description('the leader console: messages to team-lead, permission prompts, slash commands, the lead agent')
    .option('--coordinator', 'limit the lead agent to coordination tools (Agent, SendMessage, tasks, TaskStop)')
    .action((team: string, opts: { coordinator?: boolean }) => leaderCommand(team, opts))
}

export async function leaderCommand(team: string, opts: { coordinator?: boolean }): Promise<void> {
  validateName(team)
  const abort = shutdownSignal()
  let code = 0
  try {
    // Teammates it restarts in-process with changed settings: asked on a terminal, else nothing starts (exit 4).
    await runLeader({
      team,
      env: process.env,
      signal: abort.signal,
      trustSettings: settingsTrust({}),
      answerer: leaderAnswers(team),
      ...(opts.coordinator ? { coordinator: true } : {}),
    })
  } catch (err) {
    code = reportError(err)
  }
  // Watchers and model sockets would keep the process alive after the console is gone.
  process.exit(code)
}
