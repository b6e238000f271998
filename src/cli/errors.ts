import { type Command, CommanderError } from 'commander'
import { ExitCode, SwarmError, errorMessage } from '../errors.js'
import { rootDir } from '../home/paths.js'
import { explainErrno } from '../util/fs-errors.js'
import { terminalSafe } from '../terminal/neutralize.js'

/**
 * The one error funnel: `swarm: <what went wrong> — <what to do>` on stderr, the stack only with
 * SWARM_DEBUG=1, and the error's documented exit code. A raw errno error of the filesystem (disk
 * full, read-only, a directory or a link where a file belongs) is explained first (fs-errors.ts).
 */
export function reportError(raw: unknown): number {
  const { stderr, code } = describeError(raw, process.env)
  if (stderr) process.stderr.write(stderr)
  return code
}

/** What reportError prints for `raw` in a process of environment `env`, and the exit code (the leader socket answers with it). */
export function describeError(raw: unknown, env: NodeJS.ProcessEnv): { stderr: string; code: number } {
  const err = raw instanceof SwarmError ? raw : (explainErrno(raw, rootDir(env)) ?? raw)
  if (err instanceof CommanderError) {
    // commander already printed its message (unknown option, missing argument, --help...).
    return { stderr: '', code: err.exitCode === 0 ? ExitCode.ok : ExitCode.usage }
  }
  const debug = env.SWARM_DEBUG === '1'
  if (err instanceof SwarmError) {
    const hint = err.hint ? ` — ${oneLine(err.hint)}` : ''
    const stack = (raw instanceof Error ? raw : err).stack
    return { stderr: `swarm: ${oneLine(err.message)}${hint}\n${debug && stack ? stack + '\n' : ''}`, code: err.exitCode }
  }
  const stack = debug && err instanceof Error && err.stack ? err.stack + '\n' : ''
  return { stderr: `swarm: ${oneLine(errorMessage(err))} — rerun with SWARM_DEBUG=1 for details\n${stack}`, code: ExitCode.failure }
}

/**
 * Commander's usage errors (unknown option or command, missing argument) in swarm's form, one line:
 * `swarm: unknown option '--bogus' — run swarm spawn --help`, on `cmd` and every command under it
 * (the exit code, 2, is reportError's). Call it once all of them are added.
 */
export function oneLineUsageErrors(cmd: Command): void {
  const where = commandPath(cmd)
  cmd.configureOutput({
    outputError: (str, write) => write(`swarm: ${oneLine(`${str.replace(/^error:\s*/, '')} — run ${where} --help`)}\n`),
  })
  for (const sub of cmd.commands) oneLineUsageErrors(sub)
}

function commandPath(cmd: Command): string {
  const names: string[] = []
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/** One line, terminal-safe: a message may quote a file name or text a teammate wrote. */
function oneLine(s: string): string {
  return terminalSafe(s.replace(/\s*\n\s*/g, ' ').trim(), { singleLine: true })
}
