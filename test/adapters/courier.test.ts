import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, inboxOf, leftovers, panePids } from '../agents/helpers.js'
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
