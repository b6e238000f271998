import { Command } from 'commander'
import { reportError } from './errors.js'
import { registerAgentCommand } from './agent.js'
import { registerLeaderCommand } from './leader.js'
import { registerDemoCommand } from './demo.js'
import { registerLogsCommand } from './logs.js'
import { registerAttachCommand } from './attach.js'
import { registerDoctorCommand } from './doctor.js'
import { registerInboxCommands } from './inbox.js'
import { registerPermsCommands } from './perms.js'
import { registerSendCommands } from './send.js'
import { registerSpawnCommands } from './spawn.js'
import { registerStatusCommand } from './status.js'
import { registerTaskCommands } from './tasks.js'
import { registerTeamCommands } from './team.js'

export function buildProgram(): Command {
  const program = new Command()
  program
    .name('swarm')
    .description('A supervisor for teams of coding agents: tmux / iTerm2 / in-process teammates with file-locked inboxes.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
  registerTeamCommands(program)
  registerInboxCommands(program)
  registerSendCommands(program)
  registerTaskCommands(program)
  registerAgentCommand(program)
  registerLeaderCommand(program)
  registerDemoCommand(program)
  registerLogsCommand(program)
  registerPermsCommands(program)
  registerSpawnCommands(program)
  registerStatusCommand(program)
  registerAttachCommand(program)
  registerDoctorCommand(program)
  return program
}

/** Entry point used by bin/swarm.js. Exits with the documented code. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram()
  let code = 0
  try {
    await program.parseAsync(argv)
  } catch (err) {
    code = reportError(err)
  }
  process.exitCode = code
}
