import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { teamDir } from '../../src/home/paths.js'
import { readMemberState } from '../../src/store/member-state.js'
import { type Sandbox, useModelSandbox } from './helpers.js'
import { waitFor } from '../support/wait.js'
import { hasTmux } from '../support/tmux.js'

const N = 24
const names = Array.from({ length: N }, (_, i) => `m${i}`)

/** Busy loops beside the test, as other work on the machine: the team must start all the same. */
function burn(k: number): ChildProcess[] {
  return Array.from({ length: k }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
}

describe.skipIf(!hasTmux)('a large tmux team under load', () => {
  let sb: Sandbox
  useModelSandbox({ fallback: { text: 'ok' } }, (t) => ({ sb } = t))
  let burners: ChildProcess[] = []
  afterEach(() => {
    for (const b of burners) b.kill('SIGKILL')
    burners = []
  })
  const t = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env: sb.env, encoding: 'utf8' })
  const panes = () =>
    t('list-panes', '-a', '-F', '#{pane_id} #{pane_dead} #{@swarm_agent} #{window_name}')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([pane, dead, agent, window]) => ({ pane, dead: dead === '1', name: agent.split('@')[0], window }))

  it(`${N} real swarm agents (--isolated: a process each): team create exits 0 with every pane, pages of 8 beyond the leader's window, attach <team> <name> shows one`, async () => {
    burners = burn(3)
    const created = await sb.swarm(
      ['team', 'create', 'big', '--agents', names.join(','), '--backend', 'tmux', '--isolated', '--no-attach', '--cwd', sb.project],
      {
        timeout: 50_000,
      },
    )
    expect(created.code, created.stderr).toBe(0)
    for (const b of burners) b.kill('SIGKILL')
    burners = []
    const rows = panes()
    expect(
      rows
        .filter((r) => r.name !== 'team-lead')
        .map((r) => r.name)
        .sort(),
    ).toEqual([...names].sort())
    expect(rows.every((r) => !r.dead)).toBe(true)
    // 220×60: 8 stacked beside the leader (the first started on top), then pages of 8, in start order.
    const inWindow = (w: string) => rows.filter((r) => r.window === w && r.name !== 'team-lead').map((r) => r.name)
    expect(inWindow('big')).toEqual(names.slice(0, 8))
    expect(inWindow('big+')).toEqual(names.slice(8, 16))
    expect(inWindow('big+2')).toEqual(names.slice(16, 24))
    // Every gate opened: each agent got through its start-up.
    await waitFor(
      'every teammate idle',
      async () => (await Promise.all(names.map((n) => readMemberState('big', n, sb.env)))).every((s) => s?.status === 'idle'),
      45_000,
    )
    const config = JSON.parse(fs.readFileSync(path.join(teamDir('big', sb.env), 'config.json'), 'utf8')) as {
      members: Array<{ name: string; tmuxPaneId: string }>
    }
    for (const r of rows) if (r.name !== 'team-lead') expect(config.members.find((m) => m.name === r.name)?.tmuxPaneId).toBe(r.pane)

    // A client in a terminal: `swarm attach big m20` shows m20's page with m20's pane selected.
    const m20 = rows.find((r) => r.name === 'm20')!
    sb.start('script', ['-qfc', `${process.execPath} ${path.resolve('bin/swarm.js')} attach big m20`, '/dev/null'])
    const client = await waitFor('a client on m20', () => t('list-clients', '-F', '#{pane_id} #{window_name}').trim())
    expect(client).toBe(`${m20.pane} big+2`)
    const missing = await sb.swarm(['attach', 'big', 'nobody'])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toMatch(/nobody of team big has no tmux pane/)

    const deleted = await sb.swarm(['team', 'delete', 'big', '--force'], { timeout: 40_000 })
    expect(deleted.code, deleted.stderr).toBe(0)
  }, 120_000)
})
