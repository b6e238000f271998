import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, inboxOf, leftovers, panePids } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fake-cli.mjs')

/** A user-defined adapter for the fake CLI (no code of swarm names it), in the team's project. */
async function fakeAdapter(t: AgentTeam, mode: string): Promise<string> {
  // Inside its cwd: the CLI runs in swarm's sandbox, which lets it write only there (and its own home).
  const log = path.join(t.work, 'submissions.jsonl')
  const yaml = `
binary: node
command: ['${process.execPath}', '${FAKE}']
env:
  FAKE_MODE: '${mode}'
  FAKE_LOG: '${log}'
  FAKE_HOOK_SESSION_START: '{{hook:session-start}}'
  FAKE_HOOK_PROMPT_SUBMIT: '{{hook:prompt-submit}}'
  FAKE_HOOK_STOP: '{{hook:stop}}'
delivery: { method: paste, settleMs: 100, confirm: hook }
hookEvents: { Submit: prompt-submit, Stop: stop, Start: session-start }
quit: { keys: [C-c], graceMs: 2000 }
`
  await fs.mkdir(path.join(t.work, '.claude', 'swarm-agents'), { recursive: true })
  await fs.writeFile(path.join(t.work, '.claude', 'swarm-agents', 'fake.yaml'), yaml)
  return log
}

async function submissions(log: string): Promise<string[]> {
  const text = await fs.readFile(log, 'utf8').catch(() => '')
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string)
}

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
