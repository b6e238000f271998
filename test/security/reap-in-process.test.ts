import { describe, expect, it } from 'vitest'
import { isAlive } from '../../src/process/liveness.js'
import { BIN, type Sandbox } from '../e2e/helpers.js'
import { createArgs, type Job, jobFixture, output, sleepers, waitForJob } from './reap-helpers.js'
import { waitFor } from '../support/wait.js'

/*
 * Finding 6 on an in-process team: the leader hosts the teammates, and is SIGKILLed while a
 * teammate's Bash command runs (a foreground sleep and a setsid'd double fork). `team resume`
 * and `team delete --force` stop both.
 */

const newTeamJob = jobFixture()

/** An in-process team whose teammate bob runs the job; then its leader is SIGKILLed. */
async function jobOrphanedByLeader(): Promise<{ sb: Sandbox; job: Job; pids: { fg: number; escaped: number } }> {
  const { sb, job } = await newTeamJob()
  const leader = sb.start(process.execPath, [BIN, ...createArgs(sb, 'in-process')])
  const seen = output(leader)
  await waitFor('the console', () => seen().includes('swarm leader — team crew'))
  expect((await sb.swarm(['send', 'crew', 'bob', 'please start the job'])).code).toBe(0)
  const pids = await waitForJob(sb, 'crew', job)
  leader.kill('SIGKILL')
  await waitFor('the leader gone', () => !isAlive(leader.pid!), 15_000)
  expect(isAlive(pids.fg) && isAlive(pids.escaped), 'the orphans outlive their leader').toBe(true)
  return { sb, job, pids }
}

describe.skipIf(process.platform !== 'linux')('reaping an in-process team whose leader was SIGKILLed', () => {
  it('team delete --force stops what the teammates left running and reports it', async () => {
    const { sb, job, pids } = await jobOrphanedByLeader()
    const deleted = await sb.swarm(['team', 'delete', 'crew', '--force'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(sleepers(job.fg)).toEqual([])
    expect(sleepers(job.escaped)).toEqual([])
    expect(deleted.stdout).toContain('deleted team crew')
    expect(deleted.stdout).toContain(`pid ${pids.escaped} (bob:`)
  }, 90_000)

  it('team resume stops them before the new leader restarts the teammates', async () => {
    const { sb, job } = await jobOrphanedByLeader()
    const resumed = sb.start(process.execPath, [BIN, 'team', 'resume', 'crew'])
    const seen = output(resumed)
    await waitFor('the resumed console', () => seen().includes('swarm leader — team crew'), 30_000)
    expect(sleepers(job.fg)).toEqual([])
    expect(sleepers(job.escaped)).toEqual([])
    expect(seen()).toMatch(/stopped what the old leader's teammates left running: 2 processes/)
    resumed.kill('SIGTERM')
    await waitFor('the resumed leader gone', () => !isAlive(resumed.pid!), 10_000)
  }, 90_000)
})
