import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { agentDir, teamConfigPath } from '../../src/home/paths.js'
import { readMemberState } from '../../src/store/member-state.js'
import { type Sandbox, useModelSandbox } from './helpers.js'
import { processesWithEnv } from '../support/proc.js'
import { waitFor } from '../support/wait.js'
import { hasTmux } from '../support/tmux.js'
import { HOSTED_ABOVE } from '../../src/teams/hosting.js'

describe.skipIf(!hasTmux)('a hosted tmux team (team create --hosted)', () => {
  let sb: Sandbox
  useModelSandbox(
    { agents: { ann: [{ text: 'hosted reply to the lead', when: { lastUserIncludes: 'hello ann' } }] }, fallback: { text: 'ok' } },
    (t) => ({ sb } = t),
  )
  const t = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env: sb.env, encoding: 'utf8' })
  /** This test's own processes: its SWARM_HOME, beside the team's name. */
  const home = () => `SWARM_HOME=${sb.env.SWARM_HOME}`
  const createHosted = (team: string, agents: string) =>
    sb.swarm(['team', 'create', team, '--agents', agents, '--backend', 'tmux', '--hosted', '--no-attach', '--cwd', sb.project])
  const panes = () =>
    t('list-panes', '-a', '-F', '#{pane_id}\t#{pane_dead}\t#{@swarm_agent}\t#{pane_current_command}')
      .trim()
      .split('\n')
      .map((l) => l.split('\t'))
      .map(([pane, dead, agent, command]) => ({ pane, dead: dead === '1', agent, command }))

  it('shows each teammate in a pane of its own while it runs inside the leader; a message reaches it; resume after the leader died; delete leaves nothing', async () => {
    const created = await createHosted('hs', 'ann,bob')
    expect(created.code, created.stderr).toBe(0)
    await waitFor(
      'both teammates idle',
      async () => (await Promise.all(['ann', 'bob'].map((n) => readMemberState('hs', n, sb.env)))).every((s) => s?.status === 'idle'),
      30_000,
    )
    // Their panes: tagged as theirs, each a `tail` of its screen — no Node process, no wrapper, no logger.
    const views = await waitFor('both views', () => {
      const rows = panes().filter((p) => p.agent === 'ann@hs' || p.agent === 'bob@hs')
      return rows.length === 2 && rows.every((r) => !r.dead && r.command === 'tail') && rows
    })
    expect(views.map((v) => v.agent).sort()).toEqual(['ann@hs', 'bob@hs'])
    const annProcesses = processesWithEnv('SWARM_AGENT_ID=ann@hs', home())
    expect(annProcesses.length).toBe(1)
    expect(annProcesses[0]).toMatch(/^\d+ tail /)
    // Both run in the leader's process.
    const leaderPid = (await readMemberState('hs', 'team-lead', sb.env))?.pid
    expect((await readMemberState('hs', 'ann', sb.env))?.pid).toBe(leaderPid)

    // `swarm attach hs ann` (what team create runs in a terminal, and prints) reaches ann's view, not "runs in-process".
    const socket = t('display', '-p', '#{socket_path}').trim()
    const attached = await sb.swarm(['attach', 'hs', 'ann'], { env: { ...sb.env, TMUX: `${socket},1,0` } })
    expect(attached.code, attached.stderr).toBe(0)
    expect(attached.stdout).toContain(`attach -t ${views.find((v) => v.agent === 'ann@hs')!.pane}`)
    const outside = await sb.swarm(['attach', 'hs', 'ann'])
    expect(outside.code).toBe(2)
    expect(outside.stderr).toMatch(/attach needs a terminal/)

    // The console's /focus reaches the view too (no client attached here: it says how to attach to it).
    const leaderView = panes().find((p) => p.agent === 'team-lead@hs')!.pane
    const bobPane = views.find((v) => v.agent === 'bob@hs')!.pane
    t('send-keys', '-t', leaderView, '/focus bob', 'Enter')
    await waitFor('/focus answered', () => t('capture-pane', '-p', '-J', '-t', leaderView).includes(`attach -t ${bobPane}`))
    // A view hides and comes back as a process teammate's pane does; the leader is no view.
    const windowOf = (pane: string) => t('display', '-p', '-t', pane, '#{window_name}').trim()
    const hidden = await sb.swarm(['hide', 'hs', 'bob'])
    expect(hidden.code, hidden.stderr).toBe(0)
    expect(windowOf(bobPane)).toBe('hidden:bob')
    const shown = await sb.swarm(['unhide', 'hs', 'bob'])
    expect(shown.code, shown.stderr).toBe(0)
    expect(windowOf(bobPane)).toBe('hs')
    expect((await sb.swarm(['hide', 'hs', 'team-lead'])).code).toBe(7)
    expect(windowOf(leaderView)).toBe('hs')

    const sent = await sb.swarm(['send', 'hs', 'ann', 'hello ann'])
    expect(sent.code, sent.stderr).toBe(0)
    const screen = path.join(agentDir('hs', 'ann', sb.env), 'screen.log')
    await waitFor('ann’s reply in its screen', () => fs.readFileSync(screen, 'utf8').includes('hosted reply to the lead'), 30_000)
    const annPane = views.find((v) => v.agent === 'ann@hs')!.pane
    await waitFor('ann’s reply on its pane', () => t('capture-pane', '-p', '-t', annPane).includes('hosted reply to the lead'))
    expect(fs.readFileSync(path.join(agentDir('hs', 'bob', sb.env), 'screen.log'), 'utf8')).not.toContain('hosted reply to the lead')

    const status = JSON.parse((await sb.swarm(['status', 'hs', '--json'])).stdout) as {
      members: Array<{ name: string; status: string; backend?: string; pane: string; window?: string }>
    }
    expect(status.members.find((m) => m.name === 'ann')?.status).toBe('idle')
    // Where to look: each teammate's view and the leader's pane, not 'in-process' and '-'.
    expect(status.members.find((m) => m.name === 'ann')).toMatchObject({ backend: 'in-process', pane: annPane, window: 'hs' })
    expect(status.members.find((m) => m.name === 'team-lead')).toMatchObject({ pane: leaderView, window: 'hs' })

    // The leader dies (and its teammates with it): resume puts a leader back in a pane, which
    // restarts both inside it, each with one view again.
    process.kill(leaderPid!, 'SIGKILL')
    await waitFor('the leader gone', () => !processesWithEnv('SWARM_AGENT_ID=team-lead@hs', home()).some((p) => / leader hs/.test(p)))
    // Its views end with it: no pane shows ann or bob as if they still ran.
    await waitFor('the views gone with the leader', () => !panes().some((p) => (p.agent === 'ann@hs' || p.agent === 'bob@hs') && !p.dead), 15_000)
    const resumed = await sb.swarm(['team', 'resume', 'hs', '--no-attach'], { timeout: 40_000 })
    expect(resumed.code, resumed.stderr).toBe(0)
    await waitFor(
      'both running in a new leader',
      async () => {
        const [lead, ann, bob] = await Promise.all(['team-lead', 'ann', 'bob'].map((n) => readMemberState('hs', n, sb.env)))
        return lead?.pid !== leaderPid && ann?.pid === lead?.pid && bob?.pid === lead?.pid && ann?.status === 'idle' && bob?.status === 'idle'
      },
      30_000,
    )
    await waitFor('one live view each', () => {
      const rows = panes().filter((p) => (p.agent === 'ann@hs' || p.agent === 'bob@hs') && !p.dead)
      return rows.length === 2 && rows.every((r) => r.command === 'tail')
    })

    const deleted = await sb.swarm(['team', 'delete', 'hs'], { timeout: 40_000 })
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(processesWithEnv('SWARM_TEAM=hs', home())).toEqual([])
  }, 90_000)

  it('team resume keeps a live teammate with a pane process of its own and respawns a dead one there; the leader restarts the hosted ones', async () => {
    const created = await createHosted('hr', 'ann')
    expect(created.code, created.stderr).toBe(0)
    await waitFor('ann idle', async () => (await readMemberState('hr', 'ann', sb.env))?.status === 'idle', 30_000)
    // A teammate in a pane process of its own, beside the hosted one (what an agent CLI teammate is).
    const spawned = await sb.swarm(['spawn', 'hr', 'cx', '--backend', 'tmux'])
    expect(spawned.code, spawned.stderr).toBe(0)
    await waitFor('cx idle', async () => (await readMemberState('hr', 'cx', sb.env))?.status === 'idle', 30_000)
    const leaderPid = (await readMemberState('hr', 'team-lead', sb.env))?.pid
    const cxPid = (await readMemberState('hr', 'cx', sb.env))?.pid
    expect(cxPid).not.toBe(leaderPid)
    const cxAgent = () => processesWithEnv('SWARM_AGENT_ID=cx@hr', home()).filter((p) => /^\d+ \S*node\S* .* agent --team hr --name cx/.test(p))

    // The leader dies (ann with it); cx runs on in its pane: resume keeps it, and the new leader restarts ann.
    process.kill(leaderPid!, 'SIGKILL')
    await waitFor('the leader gone', () => !processesWithEnv('SWARM_AGENT_ID=team-lead@hr', home()).some((p) => / leader hr/.test(p)))
    const resumed = await sb.swarm(['team', 'resume', 'hr', '--no-attach', '--json'], { timeout: 40_000 })
    expect(resumed.code, resumed.stderr).toBe(0)
    const report = JSON.parse(resumed.stdout) as {
      leader: string
      alive: string[]
      respawned: string[]
      hosted?: string[]
      reaped: Array<{ agent: string }>
    }
    expect(report).toMatchObject({ leader: 'started', alive: ['cx'], respawned: [], hosted: ['ann'] })
    expect(report.reaped.map((p) => p.agent)).not.toContain('cx')
    expect(cxAgent().map((p) => Number(p.split(' ')[0]))).toContain(cxPid)
    const newLeader = await waitFor(
      'ann in a new leader',
      async () => {
        const [lead, ann] = await Promise.all(['team-lead', 'ann'].map((n) => readMemberState('hr', n, sb.env)))
        return lead?.pid !== leaderPid && ann?.pid === lead?.pid && ann?.status === 'idle' && lead?.pid
      },
      30_000,
    )
    // The leader started ann alone, never a twin of cx.
    expect((await readMemberState('hr', 'cx', sb.env))?.pid).toBe(cxPid)

    // The whole server goes (cx's process too): resume respawns cx in a pane from its transcript.
    t('kill-server')
    await waitFor('cx gone', () => cxAgent().length === 0)
    const again = await sb.swarm(['team', 'resume', 'hr', '--no-attach', '--json'], { timeout: 40_000 })
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ leader: 'started', alive: [], respawned: ['cx'], hosted: ['ann'] })
    const respawned = await waitFor('cx running again', () => cxAgent().length === 1 && cxAgent()[0])
    expect(respawned).toContain('--resume')
    await waitFor(
      'ann in the third leader, cx in its pane',
      async () => {
        const [lead, ann, cx] = await Promise.all(['team-lead', 'ann', 'cx'].map((n) => readMemberState('hr', n, sb.env)))
        return lead?.pid !== newLeader && ann?.pid === lead?.pid && cx?.pid !== lead?.pid && cx?.pid !== cxPid && ann?.status === 'idle'
      },
      30_000,
    )
    expect(panes().filter((p) => p.agent === 'cx@hr' && !p.dead).length).toBe(1)
    expect(panes().filter((p) => p.agent === 'ann@hr' && !p.dead && p.command === 'tail').length).toBe(1)
    expect((await sb.swarm(['team', 'delete', 'hr', '--force'], { timeout: 40_000 })).code).toBe(0)
    expect(processesWithEnv('SWARM_TEAM=hr', home())).toEqual([])
  }, 120_000)

  it('a hosted teammate that ends (swarm kill) closes its view; spawned again it gets one again', async () => {
    const created = await createHosted('hk', 'ann,bob')
    expect(created.code, created.stderr).toBe(0)
    const liveViews = (name: string) => panes().filter((p) => p.agent === `${name}@hk` && !p.dead)
    await waitFor('both views', () => liveViews('ann').length === 1 && liveViews('bob').length === 1, 30_000)
    await waitFor('ann idle', async () => (await readMemberState('hk', 'ann', sb.env))?.status === 'idle', 30_000)

    const killed = await sb.swarm(['kill', 'hk', 'ann'])
    expect(killed.code, killed.stderr).toBe(0)
    await waitFor('ann stopped', async () => (await readMemberState('hk', 'ann', sb.env))?.status === 'exited', 30_000)
    // Its view goes (no pane, dead or alive, is left showing its last screen); bob's stays.
    await waitFor('ann’s view closed', () => panes().every((p) => p.agent !== 'ann@hk'))
    expect(processesWithEnv('SWARM_AGENT_ID=ann@hk', home())).toEqual([])
    expect(liveViews('bob').length).toBe(1)
    expect(fs.readFileSync(path.join(agentDir('hk', 'ann', sb.env), 'screen.log'), 'utf8')).toMatch(/ann ended/)
    const status = JSON.parse((await sb.swarm(['status', 'hk', '--json'])).stdout) as { members: Array<{ name: string; status: string }> }
    expect(status.members.find((m) => m.name === 'ann')?.status).toBe('exited')

    const back = await sb.swarm(['spawn', 'hk', 'ann'])
    expect(back.code, back.stderr).toBe(0)
    await waitFor('ann’s view again', () => liveViews('ann').length === 1 && liveViews('ann')[0]!.command === 'tail', 30_000)
    expect((await sb.swarm(['team', 'delete', 'hk', '--force'], { timeout: 40_000 })).code).toBe(0)
    expect(processesWithEnv('SWARM_TEAM=hk', home())).toEqual([])
  }, 90_000)

  it(`hosts a team of more than ${HOSTED_ABOVE} teammates by default; --isolated gives each its process; --hosted with --isolated is refused`, async () => {
    const names = Array.from({ length: HOSTED_ABOVE + 1 }, (_, i) => `w${i}`)
    const many = ['--agents', names.join(','), '--backend', 'tmux', '--no-attach', '--json', '--cwd', sb.project]
    const hosted = await sb.swarm(['team', 'create', 'big', ...many])
    expect(hosted.code, hosted.stderr).toBe(0)
    expect(JSON.parse(hosted.stdout)).toMatchObject({ backend: 'tmux', hosted: true })
    const config = JSON.parse(fs.readFileSync(teamConfigPath('big', sb.env), 'utf8')) as Record<string, unknown>
    expect(config).toMatchObject({ swarmBackend: 'in-process', swarmViews: 'tmux' })
    await waitFor(
      'every hosted teammate idle in the leader',
      async () => {
        const states = await Promise.all(['team-lead', ...names].map((n) => readMemberState('big', n, sb.env)))
        return states.every((s) => s?.status === 'idle' && s.pid === states[0]?.pid)
      },
      60_000,
    )
    await waitFor('a tail view each', () => panes().filter((p) => p.agent?.endsWith('@big') && p.command === 'tail').length === names.length)
    expect((await sb.swarm(['team', 'delete', 'big', '--force'])).code).toBe(0)

    const isolated = await sb.swarm(['team', 'create', 'iso', ...many, '--isolated'])
    expect(isolated.code, isolated.stderr).toBe(0)
    expect(JSON.parse(isolated.stdout)).not.toHaveProperty('hosted')
    expect(JSON.parse(fs.readFileSync(teamConfigPath('iso', sb.env), 'utf8'))).toMatchObject({ swarmBackend: 'tmux' })
    expect((await sb.swarm(['team', 'delete', 'iso', '--force'])).code).toBe(0)
    expect(processesWithEnv('SWARM_TEAM=big', home())).toEqual([])
    expect(processesWithEnv('SWARM_TEAM=iso', home())).toEqual([])

    const both = await sb.swarm(['team', 'create', 'bb', '--agents', 'ann', '--backend', 'tmux', '--hosted', '--isolated', '--no-attach'])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--hosted and --isolated/)
    const inProcess = await sb.swarm(['team', 'create', 'bc', '--agents', 'ann', '--backend', 'in-process', '--isolated', '--no-attach'])
    expect(inProcess.code).toBe(2)
    expect(inProcess.stderr).toMatch(/--isolated gives each teammate a process/)
    // auto finds no panes here (no terminal): either flag is refused before the team is written, not run inside the leader.
    for (const flag of ['--isolated', '--hosted']) {
      const detected = await sb.swarm(['team', 'create', 'bd', '--agents', 'ann', flag, '--no-attach'])
      expect(detected.code, detected.stdout).toBe(2)
      expect(detected.stderr).toMatch(new RegExp(`${flag} .* but this team would run on in-process`))
      expect(fs.existsSync(teamConfigPath('bd', sb.env))).toBe(false)
    }
  }, 120_000)

  it('refuses --hosted where there are no tmux panes, and with an agent CLI member', async () => {
    const inProcess = await sb.swarm(['team', 'create', 'hx', '--agents', 'ann', '--backend', 'in-process', '--hosted', '--no-attach'])
    expect(inProcess.code).toBe(2)
    expect(inProcess.stderr).toMatch(/--hosted shows teammates in tmux panes/)
    const cli = await sb.swarm(['team', 'create', 'hy', '--agent', 'rev:codex', '--backend', 'tmux', '--hosted', '--no-attach'])
    expect(cli.code).toBe(2)
    expect(cli.stderr).toMatch(/--hosted teammates run swarm’s own agent/)
  })
})
