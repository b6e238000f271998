import { readFileSync } from 'node:fs'
import path from 'node:path'
import { UsageError } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { shellQuote } from './tmux-client.js'

/**
 * How a teammate's command is handed to tmux: its argv wrapped so its exit status is recorded
 * (tmux forgets it once the pane is gone), its environment as `-e` pairs sent on stdin, and a
 * lone argv[0] kept out of tmux's `sh -c`.
 */

/** Environment variable naming the file where a pane's wrapper writes its command's exit status. */
export const EXIT_FILE_ENV = 'SWARM_EXIT_FILE'

/** `agents/<name>/exit-status` */
export function exitStatusFile(team: string, name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentDir(team, name, env), 'exit-status')
}

/**
 * Runs argv under a tiny sh that writes its exit status to $SWARM_EXIT_FILE. The command and its
 * arguments are positional parameters ("$@"), never parsed by the shell.
 */
export function recordExitStatus(argv: string[]): string[] {
  if (argv.length === 0) throw new UsageError('a teammate needs a command')
  return ['/bin/sh', '-c', `"$@"; s=$?; printf '%s' "$s" > "$${EXIT_FILE_ENV}"; exit "$s"`, 'swarm-teammate', ...argv]
}

/** The tmux wait-for channel a gated pane waits on before its command starts, and the server to ask. */
export const START_GATE_ENV = 'SWARM_START_GATE'
export const START_SOCKET_ENV = 'SWARM_START_SOCKET'

/**
 * recordExitStatus's wrapper behind a start gate: the pane exists at once, its command starts only
 * when `tmux wait-for -S <channel>` is run (a channel signalled before anyone waits lets the waiter
 * through at once). Both variables are gone from the command's environment; a server that dies
 * first ends the pane with 1.
 */
export function gatedExitStatus(argv: string[]): string[] {
  const [sh, c, script, ...rest] = recordExitStatus(argv)
  const gate = `tmux -S "$${START_SOCKET_ENV}" wait-for "$${START_GATE_ENV}" || exit 1; unset ${START_GATE_ENV} ${START_SOCKET_ENV}; `
  return [sh, c, gate + script, ...rest]
}

export function recordedExitStatus(agentId: string, env: NodeJS.ProcessEnv): number | undefined {
  const at = agentId.lastIndexOf('@')
  try {
    const text = readFileSync(exitStatusFile(agentId.slice(at + 1), agentId.slice(0, at), env), 'utf8').trim()
    return /^\d+$/.test(text) ? Number(text) : undefined
  } catch {
    return undefined // not written (yet): the process ended without its wrapper finishing
  }
}

const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/

/** `-e NAME=value` pairs; the values go to tmux on stdin, never in an argv. */
export function envArgs(env: Record<string, string> | undefined): string[] {
  const args: string[] = []
  for (const [k, v] of Object.entries(env ?? {})) {
    if (!ENV_NAME_RE.test(k)) throw new UsageError(`invalid environment variable name ${JSON.stringify(k)}`)
    args.push('-e', `${k}=${v}`)
  }
  return args
}

/**
 * The command for split-window/new-window. tmux executes two or more arguments directly but runs
 * a single one through `sh -c`, so a lone argv[0] is quoted and exec'd to keep it uninterpreted.
 */
export function argvArgs(argv: string[]): string[] {
  if (argv.length === 0) throw new UsageError('a teammate needs a command')
  return argv.length === 1 ? [`exec ${shellQuote(argv[0])}`] : argv
}
