import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from './helpers.js'
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
})
