import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { memberCgroup } from '../../src/process/containment.js'
import { teamDir } from '../../src/home/paths.js'
import { isAlive } from '../../src/process/liveness.js'
import { createArgs, jobFixture, newJob, sleepers, waitForJob } from './reap-helpers.js'
import { waitFor } from '../support/wait.js'
import { cgroupsHere } from '../support/cgroups.js'
import { hasTmux } from '../support/tmux.js'

/*
 * Issue 23 finding 10: Codex starts its sandbox helper with a cleared environment, so it carries
 * no team marker, and one was found running with parent 1 long after its team was gone. Here a
 * teammate's command re-execs a child with `env -i` (no marker), setsid and a double fork (parent 1, its own group):
 * `team delete` still stops it — found by the member's cgroup, not by its environment — and names it.
 */

/** The escaped sleep runs with an empty environment, in a session of its own, out of the command's tree and group. */
const unmarkedJob = () => {
  const job = newJob()
  return { ...job, command: `(env -i /usr/bin/setsid /bin/sh -c 'exec sleep ${job.escaped}' &); exec sleep ${job.fg}` }
}
const newTeamJob = jobFixture(unmarkedJob)

describe.skipIf(!hasTmux || process.platform !== 'linux' || !cgroupsHere())('reaping what dropped the marker', () => {
  it('team delete stops a child that cleared its environment and double-forked, and reports it', async () => {
    const { sb, job } = await newTeamJob()
    const created = await sb.swarm([...createArgs(sb, 'tmux'), '--no-attach'])
    expect(created.code, created.stderr).toBe(0)
    await waitFor('bob running', async () => {
      const s = JSON.parse((await sb.swarm(['status', 'crew', '--json'])).stdout) as { members: Array<{ name: string; state: string }> }
      return s.members.find((m) => m.name === 'bob')?.state === 'alive'
    })
    expect((await sb.swarm(['send', 'crew', 'bob', 'please start the job'])).code).toBe(0)
    const pids = await waitForJob(sb, 'crew', job)
    // The escaped one: no marker in its environment, parent 1 (or the nearest subreaper).
    expect(fs.readFileSync(`/proc/${pids.escaped}/environ`, 'utf8')).not.toContain('SWARM_TEAM')
    const ppid = Number(fs.readFileSync(`/proc/${pids.escaped}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
    expect(ppid).not.toBe(pids.fg)

    const deleted = await sb.swarm(['team', 'delete', 'crew', '--force', '--json'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(sleepers(job.escaped)).toEqual([])
    expect(sleepers(job.fg)).toEqual([])
    expect(isAlive(pids.escaped)).toBe(false)
    const report = JSON.parse(deleted.stdout) as { processes: Array<{ pid: number; agent: string }> }
    expect(report.processes.find((p) => p.pid === pids.escaped)).toMatchObject({ agent: 'bob' })
    // Nothing is left by the cgroups either: the team's is gone.
    expect(memberCgroupsLeft(teamDir('crew', sb.env), sb.env)).toEqual([])
  }, 90_000)
})

/** The team's member cgroups still on disk (memberCgroup makes one to learn the path; it is removed again). */
function memberCgroupsLeft(dir: string, env: NodeJS.ProcessEnv): string[] {
  const probe = memberCgroup(dir, 'left-probe', env)
  if (!probe) return []
  fs.rmdirSync(probe)
  const team = probe.slice(0, probe.lastIndexOf('/'))
  const left = fs
    .readdirSync(team, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
  if (left.length === 0) fs.rmdirSync(team)
  return left
}
