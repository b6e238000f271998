import fs from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, hasCli, pendingRequests, spawnCliTeammate } from './helpers.js'
import { waitFor } from '../support/wait.js'
import { sleepers } from '../security/reap-helpers.js'
import { cgroupsHere } from '../support/cgroups.js'

/**
 * Issue 23 finding 10 for a real Codex teammate: an approved (escalated) command starts a child
 * that clears its environment (`env -i`), leaves its session (`setsid`) and its parent (a double
 * fork) — no marker, no process group. Nothing of it outlives `team delete`: Codex 0.171 runs
 * even an escalated command in a pid namespace of its own, which ends with the command (measured
 * here: the command sees its sleeper as a low pid of that namespace); were one left on the host,
 * the member's cgroup finds it and the report names it.
 */

const SECONDS = 43_217 + (process.pid % 1000)
const JOB = `(env -i /usr/bin/setsid /bin/sh -c 'exec /bin/sleep ${SECONDS}' &); sleep 0.5; for p in $(pgrep -f 'sleep ${SECONDS}'); do echo PID=$p; grep PPid /proc/$p/status; grep NSpid /proc/$p/status; done; echo JOB-STARTED`

describe.skipIf(!hasCli('codex') || process.platform !== 'linux' || !cgroupsHere())("a Codex teammate's escaped child (real CLI)", () => {
  let t: AgentTeam | undefined
  afterAll(async () => {
    for (const pid of sleepers(SECONDS)) process.kill(pid, 'SIGKILL')
    await t?.cleanup()
  }, 30_000)

  it('a child its approved command started with env -i, setsid and a double fork outlives neither the command nor team delete', async () => {
    t = await agentTeam({
      rules: [
        {
          userMatches: 'START-JOB',
          reply: {
            tool: 'exec_command',
            args: { cmd: JOB, sandbox_permissions: 'require_escalated', justification: 'a background job for the test' },
          },
        },
        { afterTool: true, reply: { text: 'The job runs.' } },
      ],
    })
    const team = t
    await spawnCliTeammate(team, 'cx', 'codex')
    await waitFor('cx idle', async () => (await agentState(team, 'cx'))?.status === 'idle', 60_000)
    await team.swarm(['send', 't', 'cx', 'START-JOB now'])
    const asked = await waitFor(
      'the escalated command asked',
      async () => (await pendingRequests(team)).find((r) => JSON.stringify(r.input).includes('JOB-STARTED')),
      60_000,
    )
    const approved = await team.swarm(['perms', 'approve', 't', asked.id])
    expect(approved.code, approved.stderr).toBe(0)
    const result = await waitFor(
      'the job result',
      () => team.server.requests.map((r) => r.view?.toolResult ?? '').find((r) => r.includes('JOB-STARTED')),
      60_000,
    )
    // It ran: the command saw its escaped sleeper (Codex runs even an approved command in a pid
    // namespace of its own, so the pids it prints are that namespace's).
    expect(result).toMatch(/PID=\d+/)
    const survivors = sleepers(SECONDS)
    for (const pid of survivors) expect(fs.readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain('SWARM_TEAM')

    const deleted = await team.swarm(['team', 'delete', 't', '--force', '--json'])
    expect(deleted.code, deleted.stderr).toBe(0)
    // Whatever outlived the command (nothing, with Codex 0.171: its namespace ended with it) is
    // gone after team delete, and named in its report.
    await waitFor('no sleeper left', () => sleepers(SECONDS).length === 0, 10_000)
    const report = JSON.parse(deleted.stdout) as { processes: Array<{ pid: number; agent: string }> }
    for (const pid of survivors) expect(report.processes.find((p) => p.pid === pid)).toMatchObject({ agent: 'cx' })
  }, 150_000)
})
