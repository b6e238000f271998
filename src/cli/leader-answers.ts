/**
 * What a team's leader answers on its socket (leader/leader-socket.ts): `status <team> --json` and
 * `send <team> <to> <text>` from a shell that is not a teammate's, run by the very functions the
 * CLI runs, in the caller's environment, their output captured — what the call prints itself, byte
 * for byte, with its exit code. Anything else, and every call that carries a teammate's identity
 * or asks for a stack (SWARM_DEBUG), is answered `local`: the caller runs it, nothing done here.
 */
import { teammateOf } from '../home/member-marker.js'
import type { LeaderAnswer, LeaderAnswerer, LeaderRequest } from '../leader/leader-socket.js'
import type { CallContext } from './call-context.js'
import { describeError } from './errors.js'
import { send } from './send.js'
import { runStatus } from './status.js'

const LOCAL: LeaderAnswer = { local: true }

export function leaderAnswers(team: string): LeaderAnswerer {
  return {
    answer: (request) => answer(team, request),
    fail: (err) => ({ stdout: '', ...describeError(err, process.env) }),
  }
}

async function answer(team: string, { argv, env }: LeaderRequest): Promise<LeaderAnswer> {
  const [command, name, ...rest] = argv
  // Commander would read an argument starting with '-' as an option: such a call is the CLI's to parse.
  if (name !== team || env.SWARM_DEBUG === '1' || rest.some((a) => a.startsWith('-') && a !== '--json')) return LOCAL
  if (command === 'status' && rest.length === 1 && rest[0] === '--json') return captured(env, (call) => runStatus(team, { json: true }, call))
  // A teammate's shell sends as itself, with what its own process may do: it sends on its own.
  if (command === 'send' && rest.length === 2 && !rest.includes('--json') && teammateOf(env) === undefined)
    return captured(env, (call) => send(team, rest[0], rest[1], {}, call))
  return LOCAL
}

async function captured(env: NodeJS.ProcessEnv, run: (call: CallContext) => Promise<void>): Promise<LeaderAnswer> {
  let stdout = ''
  try {
    await run({ env, out: (text) => (stdout += text) })
    return { stdout, stderr: '', code: 0 }
  } catch (err) {
    return { stdout, ...describeError(err, env) }
  }
}
