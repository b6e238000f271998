import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { teamDir, teamsDir } from '../../src/home/paths.js'
import { isAlive } from '../../src/process/liveness.js'
import type { Sandbox } from '../e2e/helpers.js'
import { createArgs, type Job, jobFixture, sigkillMember, sleepers, waitForJob } from './reap-helpers.js'
import { waitFor } from '../support/wait.js'
import { hasTmux, tmuxSessions } from '../support/tmux.js'

/*
 * Finding 6 on a tmux team: what a teammate's Bash command leaves running when the teammate is
 * SIGKILLed (a foreground sleep and a setsid'd double fork) is reaped by `team resume`,
 * `team delete --force` and `kill --now`; a corrupt config.json still stops everything; a
 * second leader is refused.
 */

const newTeamJob = jobFixture()

async function startTeam(): Promise<{ sb: Sandbox; job: Job }> {
  const { sb, job } = await newTeamJob()
  const created = await sb.swarm([...createArgs(sb, 'tmux'), '--no-attach'])
  expect(created.code, created.stderr).toBe(0)
  await waitFor('bob running', async () => {
    const s = JSON.parse((await sb.swarm(['status', 'crew', '--json'])).stdout) as { members: Array<{ name: string; state: string }> }
    return s.members.find((m) => m.name === 'bob')?.state === 'alive'
  })
  return { sb, job }
}

async function startJob(sb: Sandbox, job: Job): Promise<{ fg: number; escaped: number }> {
  expect((await sb.swarm(['send', 'crew', 'bob', 'please start the job'])).code).toBe(0)
  return waitForJob(sb, 'crew', job)
}

describe.skipIf(!hasTmux || process.platform !== 'linux')('reaping a tmux team', () => {
  it('team resume stops what a SIGKILLed teammate left running before respawning it', async () => {
    const { sb, job } = await startTeam()
    const pids = await startJob(sb, job)
    await sigkillMember(sb, 'crew', 'bob')
    expect(isAlive(pids.fg) && isAlive(pids.escaped), 'the orphans outlive their agent').toBe(true)

    const resumed = await sb.swarm(['team', 'resume', 'crew', '--no-attach'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(sleepers(job.fg)).toEqual([])
    expect(sleepers(job.escaped)).toEqual([])
    expect(resumed.stdout).toContain('respawned: bob')
    expect(resumed.stdout).toMatch(/stopped what dead members left running: 2 processes/)
  }, 90_000)

  it('team delete --force stops them, reports them, and leaves no process of the team', async () => {
    const { sb, job } = await startTeam()
    const pids = await startJob(sb, job)
    await sigkillMember(sb, 'crew', 'bob')
    const leader = (await readMemberState('crew', 'team-lead', sb.env))!.pid!

    const deleted = await sb.swarm(['team', 'delete', 'crew', '--force', '--json'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(sleepers(job.fg)).toEqual([])
    expect(sleepers(job.escaped)).toEqual([])
    const report = JSON.parse(deleted.stdout) as { deleted: string; processes: Array<{ pid: number; agent: string }> }
    expect(report.deleted).toBe('crew')
    expect(report.processes.map((p) => p.pid)).toEqual(expect.arrayContaining([pids.fg, pids.escaped]))
    expect(report.processes.find((p) => p.pid === pids.escaped)?.agent).toBe('bob')
    expect(isAlive(leader)).toBe(false)
    expect(tmuxSessions(sb.env)).not.toContain('swarm-crew')
  }, 90_000)

  it('kill --now stops what escaped the teammate’s process tree', async () => {
    const { sb, job } = await startTeam()
    await startJob(sb, job)
    const killed = await sb.swarm(['kill', 'crew', 'bob', '--now'])
    expect(killed.code, killed.stderr).toBe(0)
    expect(sleepers(job.escaped)).toEqual([])
    expect(sleepers(job.fg)).toEqual([])
  }, 90_000)

  it('team delete --force with a corrupt config.json stops the leader, the teammates and the session, keeps the file aside, and the name can be used again', async () => {
    const { sb, job } = await startTeam()
    await startJob(sb, job)
    const leader = (await readMemberState('crew', 'team-lead', sb.env))!.pid!
    const bob = (await readMemberState('crew', 'bob', sb.env))!.pid!
    const config = path.join(teamDir('crew', sb.env), 'config.json')
    fs.writeFileSync(config, '{"name": "crew", "members": [')

    expect((await sb.swarm(['team', 'delete', 'crew'])).code, 'without --force a corrupt config is exit 5').toBe(5)
    const deleted = await sb.swarm(['team', 'delete', 'crew', '--force'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(isAlive(leader)).toBe(false)
    expect(isAlive(bob)).toBe(false)
    expect(sleepers(job.escaped)).toEqual([])
    expect(tmuxSessions(sb.env)).not.toContain('swarm-crew')
    expect(deleted.stdout).toContain('deleted team crew')
    expect(deleted.stdout).toMatch(/its corrupt config\.json was kept as .*crew\.config\.json\.corrupt-/)
    const kept = fs.readdirSync(teamsDir(sb.env)).filter((f) => f.startsWith('crew.config.json.corrupt-'))
    expect(kept).toHaveLength(1)
    expect(fs.readFileSync(path.join(teamsDir(sb.env), kept[0]!), 'utf8')).toBe('{"name": "crew", "members": [')

    const again = await sb.swarm(['team', 'create', 'crew', '--agents', 'bob', '--no-start'])
    expect(again.code, again.stderr).toBe(0)
    expect((await sb.swarm(['team', 'list'])).stdout).toContain('crew')
  }, 90_000)

  it('a second leader for the team is refused with exit 4, naming the running one', async () => {
    const { sb } = await startTeam()
    const leader = await waitFor('the leader has written its pid', async () => (await readMemberState('crew', 'team-lead', sb.env))?.pid)
    const second = await sb.swarm(['leader', 'crew'])
    expect(second.code).toBe(4)
    expect(second.stderr).toContain(`pid ${leader}`)
    expect(isAlive(leader), 'the first leader keeps running').toBe(true)
  }, 60_000)
})
