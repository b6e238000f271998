import { randomUUID } from 'node:crypto'
import { readMemberState } from '../store/member-state.js'
import { BackendUnavailableError, ExitCode, SwarmError } from '../errors.js'
import { encodeStructured } from '../mailbox/messages.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { LEAD_NAME, validateTeammateName } from '../home/paths.js'
import { readTeam } from '../teams/team-store.js'
import type { TeamMember } from '../teams/types.js'
import { delay } from '../process/delay.js'
import { isAlive } from '../process/liveness.js'

/** How long `swarm spawn` waits for the leader to start an in-process teammate. */
export const IN_PROCESS_SPAWN_TIMEOUT_MS = 15_000

export interface InProcessSpawn {
  name: string
  agentType?: string
  model?: string
  mode?: string
  prompt?: string
  cwd?: string
  worktree?: boolean | string
  maxCostUsd?: number
  maxTokens?: number
}

/**
 * An in-process teammate can only live inside its running leader: ask that leader, through its
 * inbox, with a request signed by team-lead, and wait until the member runs. No running leader
 * is a clear error (exit 7).
 */
export async function requestInProcessSpawn(team: string, input: InProcessSpawn, env: NodeJS.ProcessEnv = process.env): Promise<TeamMember> {
  validateTeammateName(input.name)
  const lead = await readMemberState(team, LEAD_NAME, env).catch(() => undefined)
  if (!lead?.pid || lead.status === 'exited' || !isAlive(lead.pid)) {
    throw new BackendUnavailableError(`team ${team} has no running leader to host an in-process teammate`, {
      hint: `start it with "swarm team resume ${team}" (in-process teams run inside their leader), or spawn with --backend tmux`,
    })
  }
  const before = (await readTeam(team, env)).members.find((m) => m.name === input.name)
  const request = { type: 'spawn_request' as const, requestId: randomUUID(), from: LEAD_NAME, timestamp: new Date().toISOString(), ...input }
  await sendTeamMessage({ team, to: LEAD_NAME, text: encodeStructured(request), summary: `spawn ${input.name}`, env })
  const deadline = Date.now() + IN_PROCESS_SPAWN_TIMEOUT_MS
  while (Date.now() < deadline) {
    const member = (await readTeam(team, env)).members.find((m) => m.name === input.name)
    const state = await readMemberState(team, input.name, env).catch(() => undefined)
    // Running: active in the roster and a state file written by this start (the leader's pid).
    if (
      member?.isActive &&
      state?.pid === lead.pid &&
      state.status !== 'exited' &&
      (!before || (state.heartbeat ?? 0) >= Date.parse(request.timestamp))
    )
      return member
    await delay(50)
  }
  throw new SwarmError('SWARM_SPAWN_TIMEOUT', `the leader of ${team} did not start ${input.name} within ${IN_PROCESS_SPAWN_TIMEOUT_MS / 1000} s`, {
    exitCode: ExitCode.timeout,
    hint: 'look at the leader console for the reason',
  })
}
