import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, inboxOf, leftovers, panePids } from '../agents/helpers.js'
import { killTree } from '../../src/process/tree.js'
import { FAKE_IT2_DIR } from '../backends/harness.js'
import { waitFor } from '../support/wait.js'
import { fakeAdapter, submissions } from './fake-cli.js'

describe('courier: exactly-once delivery into a TUI, confirmed by its hook', () => {
  let t: AgentTeam
  afterEach(async () => t?.cleanup(), 30_000)

  for (const mode of ['', 'drop-first-enter', 'lose-first-paste']) {
    it(`delivers every message once${mode ? ` when the CLI ${mode.replace(/-/g, ' ')}s` : ''}`, async () => {
      t = await agentTeam()
      const log = await fakeAdapter(t, mode)
      expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
      const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'fake', '--backend', 'tmux', '--prompt', 'first: hello'])
      expect(spawned.stderr).toBe('')
      await waitFor('the first prompt', async () => (await submissions(log)).some((s) => s.includes('first: hello')), 30_000)
      const texts = ['/slash first\nsecond line', '@at sign ünï 😀', `long ${'x'.repeat(9000)} end`]
      for (const text of texts) expect((await t.swarm(['send', 't', 'fay', text])).code).toBe(0)
      await waitFor(
        'all delivered and read',
        async () => (await inboxOf(t, 'fay')).every((m) => (m as { read?: boolean }).read) && (await agentState(t, 'fay'))?.status === 'idle',
        30_000,
      )
      const subs = await submissions(log)
      const all = subs.join('\n\u0000\n')
      expect(all.split('first: hello').length - 1).toBe(1)
      for (const text of texts) {
        expect(
          subs.filter((s) => s.includes(text)),
          text.slice(0, 20),
        ).toHaveLength(1)
        expect(all).toContain(`[message from team-lead] ${text}`)
      }
      // Its own pane only: the leader's pane stays up after a kill.
      const pane = JSON.parse(await fs.readFile(path.join(t.home, 'teams', 't', 'config.json'), 'utf8')).members.find(
        (m: { name: string }) => m.name === 'fay',
      ).tmuxPaneId
      const sids = await panePids(t.env, t.socket, pane)
      expect((await t.swarm(['kill', 't', 'fay'])).code).toBe(0)
      const left = await leftovers(sids)
      const cmds = await Promise.all(left.map((p) => fs.readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => 'gone')))
      expect(cmds).toEqual([])
    }, 60_000)
  }
})

// The fake it2 gives a session a terminal through util-linux script(1); the fake CLI needs one.
describe.skipIf(spawnSync('script', ['-V']).status !== 0)('courier on iTerm2: an agent CLI in an iTerm2 split gets its messages through it2', () => {
  let t: AgentTeam
  let it2Dir: string
  afterEach(async () => {
    // The fake it2's sessions are no tmux panes: what still runs in them is killed here.
    const sessions = path.join(it2Dir, 'sessions')
    const pids = await fs.readdir(sessions).catch(() => [] as string[])
    for (const f of pids.filter((p) => p.endsWith('.pids'))) {
      for (const pid of (await fs.readFile(path.join(sessions, f), 'utf8')).split('\n').filter(Boolean)) await killTree(Number(pid), { graceMs: 0 })
    }
    await t?.cleanup()
  }, 30_000)

  it('pastes each message once, bracketed and with its control characters shown, into the session the member runs in', async () => {
    t = await agentTeam()
    it2Dir = path.join(t.dir, 'it2')
    Object.assign(t.env, { PATH: `${FAKE_IT2_DIR}:${t.env.PATH}`, FAKE_IT2_DIR: it2Dir, ITERM_SESSION_ID: 'w0t0p0:LEADER-0000' })
    const log = await fakeAdapter(t)
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'fake', '--backend', 'iterm2', '--prompt', 'first: hello'])
    expect(spawned.stderr).toBe('')
    await waitFor('the first prompt', async () => (await submissions(log)).some((s) => s.includes('first: hello')), 30_000)
    const texts = ['/slash first\nsecond line', '@at sign ünï 😀', 'an end of paste \x1b[201~ then Enter\r']
    for (const text of texts) expect((await t.swarm(['send', 't', 'fay', text])).code).toBe(0)
    await waitFor(
      'all delivered and read',
      async () => (await inboxOf(t, 'fay')).every((m) => (m as { read?: boolean }).read) && (await agentState(t, 'fay'))?.status === 'idle',
      30_000,
    )
    const all = (await submissions(log)).join('\n\u0000\n')
    expect(all.split('first: hello').length - 1).toBe(1)
    expect(all.split('/slash first\nsecond line').length - 1).toBe(1)
    expect(all.split('@at sign ünï 😀').length - 1).toBe(1)
    // Made visible, so the paste was not ended early and the Enter inside it submitted nothing.
    expect(all.split('an end of paste ^[[201~ then Enter').length - 1).toBe(1)
    const calls = (await fs.readFile(path.join(it2Dir, 'calls.log'), 'utf8')).split('\n').filter(Boolean)
    const session = JSON.parse(await fs.readFile(path.join(t.home, 'teams', 't', 'config.json'), 'utf8')).members.find(
      (m: { name: string }) => m.name === 'fay',
    ).tmuxPaneId
    const sent = calls.map((c) => JSON.parse(c) as string[]).filter((c) => c.slice(0, 5).join(' ') === `session send -s ${session} --`)
    expect(sent.some((c) => c[5].startsWith('\x1b[200~') && c[5].endsWith('\x1b[201~'))).toBe(true)
    expect(sent.some((c) => c[5] === '\r')).toBe(true)
    expect((await t.swarm(['kill', 't', 'fay'])).code).toBe(0)
  }, 60_000)
})
