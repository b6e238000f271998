import { CommanderError } from 'commander'
import { ExitCode, SwarmError, errorMessage } from '../errors.js'

/**
 * The one error funnel: `swarm: <what went wrong> — <what to do>` on stderr, the stack only with
 * SWARM_DEBUG=1, and the error's documented exit code.
 */
export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander already printed its message (unknown option, missing argument, --help...).
    return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage
  }
  const debug = process.env.SWARM_DEBUG === '1'
  if (err instanceof SwarmError) {
    const hint = err.hint ? ` — ${err.hint}` : ''
    process.stderr.write(`swarm: ${oneLine(err.message)}${hint}\n`)
    if (debug && err.stack) process.stderr.write(err.stack + '\n')
    return err.exitCode
  }
  process.stderr.write(`swarm: ${oneLine(errorMessage(err))} — rerun with SWARM_DEBUG=1 for details\n`)
  if (debug && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n')
  return ExitCode.failure
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim()
}
