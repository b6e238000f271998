import { createRequire } from 'node:module'
import { Command } from 'commander'
import { refuseDebuggerSignal } from '../process/handlers.js'
import { oneLineUsageErrors, reportError } from './errors.js'

type Register = (program: Command) => void

/**
 * Each command group, loaded only when used: `swarm status` must not pay for the SDK that
 * `swarm agent` needs (CLI start-up is most of what a status call costs).
 */
const GROUPS: Record<string, () => Promise<Register>> = {
  team: () => import('./team.js').then((m) => m.registerTeamCommands),
  inbox: () => import('./inbox.js').then((m) => m.registerInboxCommands),
  send: () => import('./send.js').then((m) => m.registerSendCommands),
  tasks: () => import('./tasks.js').then((m) => m.registerTaskCommands),
  agent: () => import('./agent.js').then((m) => m.registerAgentCommand),
  leader: () => import('./leader.js').then((m) => m.registerLeaderCommand),
  demo: () => import('./demo.js').then((m) => m.registerDemoCommand),
  logs: () => import('./logs.js').then((m) => m.registerLogsCommand),
  perms: () => import('./perms.js').then((m) => m.registerPermsCommands),
  spawn: () => import('./spawn.js').then((m) => m.registerSpawnCommands),
  kill: () => import('./spawn.js').then((m) => m.registerSpawnCommands),
  status: () => import('./status.js').then((m) => m.registerStatusCommand),
  attach: () => import('./attach.js').then((m) => m.registerAttachCommand),
  doctor: () => import('./doctor.js').then((m) => m.registerDoctorCommand),
  hide: () => import('./pane.js').then((m) => m.registerPaneCommands),
  unhide: () => import('./pane.js').then((m) => m.registerPaneCommands),
  layout: () => import('./pane.js').then((m) => m.registerPaneCommands),
  worktrees: () => import('./worktrees.js').then((m) => m.registerWorktreeCommands),
  compact: () => import('./long-run.js').then((m) => m.registerLongRunCommands),
  budget: () => import('./long-run.js').then((m) => m.registerLongRunCommands),
  hook: () => import('./hook.js').then((m) => m.registerHookCommand),
  mcp: () => import('./mcp.js').then((m) => m.registerMcpCommand),
  'agent-cli': () => import('./agent-cli.js').then((m) => m.registerAgentCliCommand),
  relay: () => import('./relay.js').then((m) => m.registerRelayCommand),
  remote: () => import('./remote.js').then((m) => m.registerRemoteCommands),
  hosts: () => import('./remote.js').then((m) => m.registerRemoteCommands),
  batch: () => import('./batch.js').then((m) => m.registerBatchCommand),
  model: () => import('./model.js').then((m) => m.registerModelCommands),
  web: () => import('./web.js').then((m) => m.registerWebCommand),
  completion: () => import('./completion.js').then((m) => m.registerCompletionCommand),
}

/** Groups that need every other group registered: completion walks the whole program. scripts/bundle.mjs reads this line. */
const WHOLE_PROGRAM = new Set(['completion'])

/**
 * Set by scripts/bundle.mjs (esbuild `define`): package.json's version; tsc's dist/ has none.
 * (`swarm`, `swarm --help` and `swarm --version` are answered by bin/swarm.js from the build.)
 */
declare const SWARM_BUILD: { version: string } | undefined
const BUILD = typeof SWARM_BUILD === 'undefined' ? undefined : SWARM_BUILD

/** package.json's version: the build's, else read beside dist/ (and src/) at run time. */
const VERSION: string = BUILD?.version ?? (createRequire(import.meta.url)('../../package.json') as { version: string }).version

/** The program with every command group, or only `only`'s (same commands, cheaper to load). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command()
  program
    .name('swarm')
    .description('A supervisor for teams of coding agents: tmux / iTerm2 / in-process teammates with file-locked inboxes.')
    .version(VERSION)
    .exitOverride()
  const names = only === '--version' || only === '-V' ? [] : only && GROUPS[only] && !WHOLE_PROGRAM.has(only) ? [only] : Object.keys(GROUPS)
  const registers = new Set(await Promise.all(names.map((n) => GROUPS[n]())))
  for (const register of registers) register(program)
  oneLineUsageErrors(program)
  return program
}

/** Entry point used by bin/swarm.js. Exits with the documented code. */
export async function main(argv: string[]): Promise<void> {
  // Every swarm process a teammate's pane runs (its wrapper, the relay's send/tasks) is in its process group.
  refuseDebuggerSignal()
  try {
    const program = await buildProgram(argv[2])
    await program.parseAsync(argv)
    // A command that printed its result may still have failed in part (doctor, worktrees): it set process.exitCode.
    process.exitCode ??= 0
  } catch (err) {
    process.exitCode = reportError(err)
  }
}
