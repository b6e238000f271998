import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killTree } from '../../src/process/tree.js'
import { BIN, sandbox, type Sandbox } from './helpers.js'
import { waitFor } from '../support/wait.js'
import { hasTmux, reapTmux } from '../support/tmux.js'

/** The user's own tmux (a private server standing in for it), and swarm started from one of its panes. */
describe.skipIf(!hasTmux)('team create from inside tmux', () => {
  let sb: Sandbox
  let inside: NodeJS.ProcessEnv
  const userTmux = (...args: string[]) => execFileSync('tmux', ['-L', 'user', ...args], { env: sb.env, encoding: 'utf8' })
  beforeAll(() => {
    // No model is reached in this test; a key makes `team create` start the teammates.
    sb = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' })
    userTmux('new-session', '-d', '-s', 'mine', '-x', '200', '-y', '50')
    const socket = userTmux('display-message', '-p', '#{socket_path}').trim()
    const pane = userTmux('display-message', '-p', '#{pane_id}').trim()
    inside = { ...sb.env, TMUX: `${socket},1,0`, TMUX_PANE: pane }
  })
  /** A shell of the user's tmux, in a window of its own, running `swarm <args>` with a terminal; its output and exit status once it ends. */
  async function inUserPane(name: string, args: string[]): Promise<{ code: number; screen: string }> {
    const script = path.join(sb.root, `${name}.sh`)
    const exports = Object.entries(sb.env)
      .filter(([k, v]) => v !== undefined && !k.startsWith('TMUX_PANE') && k !== 'TMUX' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}='${String(v).replace(/'/g, `'\\''`)}'`)
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ')
    fs.writeFileSync(script, `${exports.join('\n')}\ncd '${sb.project}'\n${quoted}\necho "exit=$?"\nexec sleep 600\n`)
    userTmux('new-window', '-d', '-n', name, `sh ${script}`)
    const screen = await waitFor(
      `${name} to finish`,
      () => {
        const text = userTmux('capture-pane', '-p', '-J', '-t', `mine:${name}`)
        return /exit=\d+/.test(text) ? text : undefined
      },
      30_000,
    )
    userTmux('kill-window', '-t', `mine:${name}`)
    return { code: Number(/exit=(\d+)/.exec(screen)![1]), screen }
  }

  afterAll(async () => {
    await reapTmux(sb.env, 'user')
    await sb?.cleanup()
  })

  it("opens a window of the team's own in the user's session, leader on the left; delete closes it", async () => {
    const r = await sb.swarm(['team', 'create', 'inner', '--agents', 'a1', '--cwd', sb.project, '--no-attach'], { env: inside })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('tmux select-window -t inner')
    const windows = userTmux('list-windows', '-F', '#{window_name}').trim().split('\n')
    expect(windows).toHaveLength(2)
    expect(windows[1]).toBe('inner') // right after the user's current window
    const panes = userTmux('list-panes', '-t', 'mine:inner', '-F', '#{pane_left} #{pane_start_command}').trim().split('\n')
    expect(panes).toHaveLength(2)
    expect(panes[0]).toMatch(/^0 .*swarm\.js leader inner/)
    expect(panes[1]).toMatch(/swarm\.js agent --team inner --name a1/)
    // No server of swarm's own was started.
    expect(() => execFileSync('tmux', ['-L', 'swarm', 'list-sessions'], { env: sb.env, stdio: 'ignore' })).toThrow()
    await waitFor(
      'a1 idle',
      async () =>
        (
          JSON.parse((await sb.swarm(['status', 'inner', '--json'], { env: inside })).stdout) as { members: Array<{ name: string; status: string }> }
        ).members.find((m) => m.name === 'a1')?.status === 'idle',
    )
    const deleted = await sb.swarm(['team', 'delete', 'inner'], { env: inside })
    expect(deleted.code, deleted.stderr).toBe(0)
    await waitFor('the window closed', () => !userTmux('list-windows', '-F', '#{window_name}').includes('inner'))
  }, 40_000)

  it('with no client attached, team create exits 0 and prints the command that attaches to the team', async () => {
    expect(userTmux('list-clients')).toBe('')
    const r = await inUserPane('runner', ['team', 'create', 'noclient', '--cwd', sb.project])
    expect(r.code, r.screen).toBe(0)
    const pane = userTmux('list-panes', '-a', '-F', '#{pane_id} #{@swarm_agent}')
      .split('\n')
      .find((l) => l.endsWith(' team-lead@noclient'))!
      .split(' ')[0]
    const socket = userTmux('display-message', '-p', '#{socket_path}').trim()
    expect(r.screen).toContain(`no tmux client is attached to switch to team noclient; attach with: tmux -S ${socket} attach -t ${pane}`)
    expect((await sb.swarm(['team', 'delete', 'noclient'], { env: inside })).code).toBe(0)
  }, 40_000)

  it("a dead leader comes back in its pane of the team's window on your tmux, resumed from outside it; status reads it", async () => {
    const r = await sb.swarm(['team', 'create', 'back', '--agents', 'a1', '--cwd', sb.project, '--no-attach'], { env: inside })
    expect(r.code, r.stderr).toBe(0)
    const leaderRow = () =>
      userTmux('list-panes', '-a', '-F', '#{pane_id} #{pane_dead} #{pane_pid} #{window_name} #{@swarm_agent}')
        .split('\n')
        .filter((l) => l.endsWith(' team-lead@back'))
        .map((l) => l.split(' '))
    const [[pane, , pid]] = leaderRow()
    await killTree(Number(pid), { graceMs: 0 })
    await waitFor('the leader pane dead', () => leaderRow()[0]?.[1] === '1')
    // From a shell outside tmux (TMUX unset): the team's server is the one recorded for it.
    const resumed = await sb.swarm(['team', 'resume', 'back', '--no-attach'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(leaderRow()).toEqual([[pane, '0', expect.stringMatching(/^\d+$/), 'back', 'team-lead@back']])
    expect(() => execFileSync('tmux', ['-L', 'swarm', 'list-sessions'], { env: sb.env, stdio: 'ignore' })).toThrow()
    const lead = await waitFor('status to read the leader', async () => {
      const members = JSON.parse((await sb.swarm(['status', 'back', '--json'])).stdout).members as Array<{
        name: string
        status: string
        pane?: string
      }>
      const m = members.find((x) => x.name === 'team-lead')
      return m && m.status !== 'dead' && m.status !== 'starting' ? m : undefined
    })
    expect(lead).toMatchObject({ pane })
    expect((await sb.swarm(['team', 'delete', 'back'])).code).toBe(0)
    await waitFor('the window closed', () => !userTmux('list-windows', '-F', '#{window_name}').includes('back'))
  }, 60_000)
})
