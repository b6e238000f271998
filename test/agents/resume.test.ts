import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, hasCli, leftovers, panePids } from './helpers.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)
/** The CLIs whose teammates are crashed and resumed, and the session each must continue. */
const CLIS = [
  { name: 'cx', agent: 'codex' },
  { name: 'gm', agent: 'gemini' },
  { name: 'pm', agent: 'pi' },
  { name: 'oc', agent: 'opencode' },
  { name: 'qw', agent: 'qwen' },
].filter((c) => hasCli(c.agent))

/** `swarm team resume` after the tmux server is killed or a pane: each CLI teammate (Codex, Gemini CLI, pi, opencode, Qwen Code) continues its session; unread messages arrive once. */
describe.skipIf(CLIS.length === 0)(`team resume of agent-CLI teammates (${CLIS.map((c) => c.agent).join(', ')})`, () => {
  let t: AgentTeam
  const idle = (name: string) => waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 90_000)
  beforeAll(async () => {
    t = await agentTeam({ fallback: { text: 'Noted.' } })
    const file = path.join(t.dir, 'team.json')
    const members = CLIS.map((c) => ({ name: c.name, agent: c.agent, model: 'loopback', prompt: `BEFORE-CRASH-${c.name} remember the word walnut` }))
    fs.writeFileSync(file, JSON.stringify({ backend: 'tmux', members }))
    const r = await t.swarm(['team', 'create', 't', '--from', file, '--no-attach'])
    expect(r.code, r.stderr).toBe(0)
    for (const c of CLIS) await idle(c.name)
  }, 180_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it('after `tmux kill-server`, resume restarts each with its session and delivers the messages sent meanwhile exactly once', async () => {
    for (const c of CLIS) expect(t.server.submissionsOf(`BEFORE-CRASH-${c.name}`), c.agent).toHaveLength(1)
    await run('tmux', ['-L', t.socket, 'kill-server'], { env: t.env })
    const status = async () =>
      (JSON.parse((await t.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; status: string; state: string }> }).members
    await waitFor(
      'every teammate dead',
      async () => (await status()).filter((m) => m.name !== 'team-lead').every((m) => m.state === 'dead'),
      30_000,
      { intervalMs: 200 },
    )
    for (const c of CLIS) expect((await t.swarm(['send', 't', c.name, `AFTER-CRASH-${c.name} what was the word?\nsecond line`])).code).toBe(0)

    const resumed = await t.swarm(['team', 'resume', 't', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect((JSON.parse(resumed.stdout) as { respawned: string[] }).respawned.sort()).toEqual(CLIS.map((c) => c.name).sort())
    for (const c of CLIS) {
      await waitFor(`${c.agent}: the message sent while it was down`, () => t.server.submissionsOf(`AFTER-CRASH-${c.name}`).length > 0, 90_000)
      await idle(c.name)
    }
    // A late duplicate would come within the courier's retry window.
    await new Promise((r) => setTimeout(r, 4_000))
    for (const c of CLIS) {
      const subs = t.server.submissionsOf(`AFTER-CRASH-${c.name}`)
      expect(subs, `${c.agent} submissions`).toHaveLength(1)
      expect(subs[0].view?.lastUser).toContain('second line')
      // Its own session continued: the request carries the conversation from before the crash.
      expect(JSON.stringify(subs[0].body), `${c.agent} continued its session`).toContain(`BEFORE-CRASH-${c.name}`)
      // …and the first prompt was not submitted again.
      expect(t.server.submissionsOf(`BEFORE-CRASH-${c.name}`), c.agent).toHaveLength(1)
    }
    for (const m of (await status()).filter((x) => x.name !== 'team-lead')) expect(m.status, m.name).toBe('idle')
  }, 240_000)

  it('after one pane is killed, resume restarts only that teammate, which continues and gets its message once', async () => {
    const victim = CLIS[0]
    const panes = (await run('tmux', ['-L', t.socket, 'list-panes', '-a', '-F', '#{pane_pid} #{pane_title} #{pane_id}'], { env: t.env })).stdout
    const status = async () =>
      (JSON.parse((await t.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; pane: string; state: string }> }).members
    const pane = (await status()).find((m) => m.name === victim.name)!.pane
    const pid = Number(
      panes
        .split('\n')
        .find((l) => l.endsWith(` ${pane}`))
        ?.split(' ')[0],
    )
    expect(pid).toBeGreaterThan(1)
    // The pane's whole session, as a crash would take it: the wrapper, the CLI and its children.
    const sids = await panePids(t.env, t.socket, pane)
    for (const p of await leftovers(sids)) process.kill(p, 'SIGKILL')
    await waitFor(`${victim.name} dead`, async () => (await status()).find((m) => m.name === victim.name)?.state !== 'alive', 30_000, {
      intervalMs: 200,
    })
    expect((await t.swarm(['send', 't', victim.name, `PANE-KILLED-${victim.name} still there?`])).code).toBe(0)
    const resumed = await t.swarm(['team', 'resume', 't', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    const report = JSON.parse(resumed.stdout) as { respawned: string[]; alive: string[] }
    expect(report.respawned).toEqual([victim.name])
    expect(report.alive.sort()).toEqual(
      CLIS.slice(1)
        .map((c) => c.name)
        .sort(),
    )
    await waitFor('the message after the pane was killed', () => t.server.submissionsOf(`PANE-KILLED-${victim.name}`).length > 0, 90_000)
    await idle(victim.name)
    await new Promise((r) => setTimeout(r, 3_000))
    const subs = t.server.submissionsOf(`PANE-KILLED-${victim.name}`)
    expect(subs).toHaveLength(1)
    expect(JSON.stringify(subs[0].body)).toContain(`AFTER-CRASH-${victim.name}`)
  }, 180_000)

  it('team delete then leaves no process behind', async () => {
    const sids = await panePids(t.env, t.socket)
    const r = await t.swarm(['team', 'delete', 't'])
    expect(r.code, r.stderr).toBe(0)
    expect(await leftovers(sids)).toEqual([])
  }, 60_000)
})
