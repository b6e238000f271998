import { type ChildProcess, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { inboxPath } from '../../src/home/paths.js'
import { isAlive } from '../../src/process/liveness.js'
import { readTeam } from '../../src/teams/team-store.js'
import { BIN } from '../support/repo.js'
import { hasTmux } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'
import { sandbox, type Sandbox } from './helpers.js'

/**
 * `team resume` keeps what lives: a leader that left (/quit) or lost its pane comes back in a
 * pane of its own on the left while its idle teammates keep running; a member stopped with
 * `swarm kill` is named, not silently skipped, and stays stopped on both backends (an in-process
 * leader does not restart it) until `swarm spawn`; a `--no-start` roster starts later (tmux
 * through resume, in-process through its leader).
 */
describe.skipIf(!hasTmux)('team resume on an isolated tmux server', () => {
  let sb: Sandbox
  let server: LoopbackServer
  beforeAll(async () => {
    server = await startLoopbackServer({ scenario: { fallback: { text: 'Noted.' } } })
    sb = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url })
  })
  afterAll(async () => {
    await sb?.cleanup()
    await server?.close()
  })

  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env: sb.env, encoding: 'utf8' })
  /** The team window's panes (dead flag and tag): the leader's first (on the left), then the teammates' in name order. */
  const panes = (team: string) => {
    const [first, ...rest] = tmux('list-panes', '-t', `=swarm-${team}:`, '-F', '#{pane_dead} #{@swarm_agent}').trim().split('\n')
    return [first, ...rest.sort()]
  }
  const state = async (team: string, name: string) => {
    const s = JSON.parse((await sb.swarm(['status', team, '--json'])).stdout) as { members: Array<{ name: string; state: string }> }
    return s.members.find((m) => m.name === name)?.state
  }
  const idlePid = (team: string, name: string) =>
    waitFor(`${name} idle`, async () => {
      const s = await readMemberState(team, name, sb.env)
      return s?.status === 'idle' && s.pid !== undefined && isAlive(s.pid) && s.pid
    })

  it('a leader that quit, or whose pane was closed, comes back on the left; live teammates keep running', async () => {
    const created = await sb.swarm(['team', 'create', 'rz', '--agents', 'a,b', '--backend', 'tmux', '--cwd', sb.project, '--no-attach', '--json'])
    expect(created.code, created.stderr).toBe(0)
    const leaderPane = (JSON.parse(created.stdout) as { leaderPane: string }).leaderPane
    const [a, b] = [await idlePid('rz', 'a'), await idlePid('rz', 'b')]

    tmux('send-keys', '-t', leaderPane, '/quit', 'Enter')
    await waitFor('the leader gone', async () => (await state('rz', 'team-lead')) === 'exited', 15_000, {
      output: () => tmux('capture-pane', '-p', '-t', leaderPane),
    })
    const resumed = await sb.swarm(['team', 'resume', 'rz', '--no-attach'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain('team rz: leader started; alive: a, b; respawned: none')
    await new Promise((r) => setTimeout(r, 1_500))
    expect([isAlive(a), isAlive(b)]).toEqual([true, true])
    await waitFor('the new leader alive', async () => (await state('rz', 'team-lead')) === 'alive')
    expect(panes('rz')).toEqual(['0 team-lead@rz', '0 a@rz', '0 b@rz'])

    // The leader's pane closed (its process with it): a new one is split in on the left.
    tmux('kill-pane', '-t', leaderPane)
    await waitFor('the leader pane gone', async () => (await state('rz', 'team-lead')) !== 'alive')
    const again = await sb.swarm(['team', 'resume', 'rz', '--no-attach'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain('leader started; alive: a, b; respawned: none')
    await waitFor('the new leader alive', async () => (await state('rz', 'team-lead')) === 'alive')
    expect(panes('rz')).toEqual(['0 team-lead@rz', '0 a@rz', '0 b@rz'])
    expect([isAlive(a), isAlive(b)]).toEqual([true, true])
  }, 90_000)

  it('names a member stopped with swarm kill instead of skipping it silently', async () => {
    const killed = await sb.swarm(['kill', 'rz', 'b', '--now'])
    expect(killed.code, killed.stderr).toBe(0)
    await waitFor('b stopped', async () => (await state('rz', 'b')) !== 'alive')
    const resumed = await sb.swarm(['team', 'resume', 'rz', '--no-attach'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain('team rz: leader alive; alive: a; respawned: none')
    expect(resumed.stdout).toContain(
      'stopped: b (swarm kill); continue its session with: swarm team resume rz --include-stopped (or start it anew: swarm spawn rz b)',
    )
    const json = JSON.parse((await sb.swarm(['team', 'resume', 'rz', '--no-attach', '--json'])).stdout) as { stopped: string[] }
    expect(json.stopped).toEqual(['b'])
    expect(await state('rz', 'b')).not.toBe('alive')
    // --include-stopped starts it again, continuing its own transcript (--resume).
    const back = await sb.swarm(['team', 'resume', 'rz', '--no-attach', '--include-stopped', '--json'])
    expect(back.code, back.stderr).toBe(0)
    expect(JSON.parse(back.stdout)).toMatchObject({ restarted: ['b'], respawned: ['b'], stopped: [] })
    await waitFor('b alive again', async () => (await state('rz', 'b')) === 'alive')
    expect(panes('rz')).toContain('0 b@rz')
    expect((await readTeam('rz', sb.env)).members.find((m) => m.name === 'b')?.swarmStopped).toBeUndefined()
    expect((await sb.swarm(['team', 'delete', 'rz', '--force'])).code).toBe(0)
  }, 60_000)

  it('a --no-start tmux team records its backend and starts on team resume', async () => {
    const created = await sb.swarm(['team', 'create', 'ns', '--agents', 'a', '--backend', 'tmux', '--cwd', sb.project, '--no-start', '--json'])
    expect(created.code, created.stderr).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ swarmBackend: 'tmux' })
    const resumed = await sb.swarm(['team', 'resume', 'ns', '--no-attach'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain('team ns: leader started; alive: none; respawned: a')
    await idlePid('ns', 'a')
    expect(await state('ns', 'a')).toBe('alive')
    expect((await sb.swarm(['team', 'delete', 'ns', '--force'])).code).toBe(0)
  }, 60_000)

  it('a --no-start in-process team: its leader starts the roster', async () => {
    const created = await sb.swarm(['team', 'create', 'ip', '--agents', 'a', '--backend', 'in-process', '--cwd', sb.project, '--no-start'])
    expect(created.code, created.stderr).toBe(0)
    expect((await readTeam('ip', sb.env)).swarmBackend).toBe('in-process')
    const leader = sb.start(process.execPath, [BIN, 'leader', 'ip'])
    let out = ''
    leader.stdout?.on('data', (d) => (out += String(d)))
    const a = await waitFor('a running inside the leader', async () => {
      const s = await readMemberState('ip', 'a', sb.env)
      return s?.status === 'idle' && s.pid === leader.pid && s
    })
    expect(a.pid, out).toBe(leader.pid)
    // Stopped at once, as a is idle: SIGTERM in the leader's first moments ends it too (leader-stop.test.ts).
    const exited = new Promise((resolve) => leader.once('exit', resolve))
    leader.kill('SIGTERM')
    expect(await exited, out).toBe(0)
  }, 60_000)

  it('in-process: a teammate stopped with swarm kill stays stopped on team resume, is named, and swarm spawn starts it again', async () => {
    const created = await sb.swarm(['team', 'create', 'ik', '--agents', 'a,b', '--backend', 'in-process', '--cwd', sb.project, '--no-start'])
    expect(created.code, created.stderr).toBe(0)
    /** `swarm team resume ik` runs the in-process leader in the foreground: its output, once it hosts `expect`. */
    const resume = async (expected: string[]): Promise<{ leader: ChildProcess; out: () => string }> => {
      const leader = sb.start(process.execPath, [BIN, 'team', 'resume', 'ik', '--no-attach'])
      let out = ''
      leader.stdout?.on('data', (d) => (out += String(d)))
      for (const name of expected)
        await waitFor(`${name} running inside the leader`, async () => {
          const s = await readMemberState('ik', name, sb.env)
          return s?.status === 'idle' && s.pid === leader.pid
        })
      await waitFor('the console up', () => out.includes('swarm leader — team ik'))
      // A SIGTERM in the leader's first moments can leave a teammate's loop running (see above): let it settle.
      await new Promise((r) => setTimeout(r, 1_000))
      return { leader, out: () => out }
    }
    const stop = async (leader: ChildProcess) => {
      const exited = new Promise((resolve) => leader.once('exit', resolve))
      leader.kill('SIGTERM')
      const late = setTimeout(() => leader.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(late)
    }
    const first = await resume(['a', 'b'])
    const killed = await sb.swarm(['kill', 'ik', 'b'])
    expect(killed.code, killed.stderr).toBe(0)
    await waitFor('b shut down', async () => (await readMemberState('ik', 'b', sb.env))?.status === 'exited', 20_000)
    await stop(first.leader)

    const second = await resume(['a'])
    // The leader hosts a again, not b; and says so. Its console comes up only once it has started
    // its roster (each start marks the member active), so by then b would have been started.
    expect(second.out()).toContain('stopped: b (swarm kill); continue its session with: swarm team resume ik --include-stopped')
    expect((await readTeam('ik', sb.env)).members.find((m) => m.name === 'b')?.isActive).toBe(false)
    expect((await readMemberState('ik', 'b', sb.env))?.pid).not.toBe(second.leader.pid)
    expect((await readMemberState('ik', 'b', sb.env))?.status).toBe('exited')

    const spawned = await sb.swarm(['spawn', 'ik', 'b'])
    expect(spawned.code, spawned.stderr).toBe(0)
    const b = await readMemberState('ik', 'b', sb.env)
    expect(b?.pid).toBe(second.leader.pid)
    expect(b?.status).not.toBe('exited')
    expect((await readTeam('ik', sb.env)).members.find((m) => m.name === 'b')?.swarmStopped).toBeUndefined()
    await stop(second.leader)

    // With no leader running nothing runs it: it is marked stopped, and no request waits in its inbox for its next start.
    const inbox = () => fs.readFileSync(inboxPath('ik', 'b', sb.env), 'utf8').split('shutdown_request').length - 1
    const requests = inbox()
    expect(requests).toBeGreaterThan(0) // the first kill's
    const idle = await sb.swarm(['kill', 'ik', 'b'])
    expect(idle.code, idle.stderr).toBe(0)
    expect(idle.stdout).toContain('b has stopped')
    expect(inbox()).toBe(requests)
    expect((await readTeam('ik', sb.env)).members.find((m) => m.name === 'b')?.swarmStopped).toBe(true)
  }, 90_000)
})
