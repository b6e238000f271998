import fs from 'node:fs'
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { updateTeam } from '../../src/teams/team-store.js'
import { leadKeyPath, leadPublicKeyPath } from '../../src/trust/keys.js'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { isAlive } from '../../src/process/liveness.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { waitFor } from '../support/wait.js'
import { hasTmux } from '../support/tmux.js'

/**
 * A lost `lead.key` is an error that names the file and `swarm team rekey`, never a silent new
 * pair; `swarm team rekey` hands running teammates the new public key in a message signed by the
 * old one, or — the old key gone — restarts them. Either way the next lead order is honoured.
 */

let server: LoopbackServer
let sb: Sandbox | undefined

beforeAll(async () => {
  server = await startLoopbackServer({ scenario: { fallback: { text: 'Noted.' } } })
})
afterAll(async () => {
  await server.close()
})
afterEach(async () => {
  await sb?.swarm(['team', 'delete', 'crew', '--force'])
  await sb?.cleanup()
  sb = undefined
})

async function createCrew(): Promise<{ sb: Sandbox; pid: number }> {
  const box = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url })
  sb = box
  const created = await box.swarm(['team', 'create', 'crew', '--agents', 'alice', '--backend', 'tmux', '--cwd', box.project, '--no-attach'])
  expect(created.code, created.stderr).toBe(0)
  const pid = await alicePid(box)
  return { sb: box, pid }
}

/** alice's pid once she runs and is idle. */
function alicePid(box: Sandbox, not?: number): Promise<number> {
  return waitFor('alice idle', async () => {
    const s = await readMemberState('crew', 'alice', box.env)
    return s?.status === 'idle' && s.pid !== undefined && s.pid !== not && isAlive(s.pid) && s.pid
  })
}

/** Stopped by the signed shutdown_request (an unverified one is ignored: the kill would time out and force it). */
function expectGracefulStop(box: Sandbox, stdout: string): void {
  expect(stdout).toMatch(/^alice (agreed to shut down and )?has stopped$/m)
  expect(fs.readFileSync(`${box.env.SWARM_HOME}/teams/crew/agents/alice/pane.log`, 'utf8')).not.toContain('UNVERIFIED')
}

describe.skipIf(!hasTmux)('lead key loss and swarm team rekey', () => {
  it('with the old key: running teammates are handed the new key (signed by the old) and honour orders signed by the new one', async () => {
    const { sb: box, pid } = await createCrew()
    const before = fs.readFileSync(leadPublicKeyPath('crew', box.env), 'utf8')
    const r = await box.swarm(['team', 'rekey', 'crew'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('new lead key pair (signed by the old key)')
    expect(r.stdout).toContain('handed the new public key to: alice')
    expect(fs.readFileSync(leadPublicKeyPath('crew', box.env), 'utf8')).not.toBe(before)
    await waitFor('alice to switch keys', () =>
      fs.readFileSync(box.env.SWARM_HOME + '/teams/crew/agents/alice/pane.log', 'utf8').includes('new lead key'),
    )
    expect((await readMemberState('crew', 'alice', box.env))?.pid).toBe(pid) // not restarted
    // A shutdown_request signed with the NEW key is a verified order: alice agrees and stops.
    const killed = await box.swarm(['kill', 'crew', 'alice', '--timeout', '10000'])
    expectGracefulStop(box, killed.stdout)
  })

  it('with the old key: a member that reads its own inbox (Claude Code: no lead_key_update) is restarted, not handed a message it would ignore', async () => {
    const { sb: box, pid } = await createCrew()
    // As a Claude Code member is recorded: it consumes its own inbox and checks orders with its start key.
    await updateTeam(
      'crew',
      (t) => {
        t.members.find((m) => m.name === 'alice')!.ownsInbox = true
      },
      box.env,
    )
    const r = await box.swarm(['team', 'rekey', 'crew'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('restarted with the new key: alice')
    expect(r.stdout).not.toContain('handed the new public key to: alice')
    expect(await alicePid(box, pid)).not.toBe(pid)
    expect(isAlive(pid)).toBe(false)
  })

  it('with the old key: a pane teammate that records no pid (an agent-CLI wrapper, Claude Code) is found by its pane, not left out', async () => {
    const { sb: box } = await createCrew()
    const spawned = await box.swarm(['spawn', 'crew', 'bob', '--backend', 'tmux', '--command', 'sleep 600', '--json'])
    expect(spawned.code, spawned.stderr).toBe(0)
    const before = JSON.parse(spawned.stdout).pid as number
    await updateTeam(
      'crew',
      (t) => {
        t.members.find((m) => m.name === 'bob')!.ownsInbox = true
      },
      box.env,
    )
    const r = await box.swarm(['team', 'rekey', 'crew'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('handed the new public key to: alice')
    expect(r.stdout).toContain('restarted with the new key: bob')
    expect(isAlive(before)).toBe(false)
  })

  it('without it: every lead command names the file and swarm team rekey; rekey restarts the running teammates with the new key', async () => {
    const { sb: box, pid } = await createCrew()
    const keyFile = leadKeyPath('crew', box.env)
    fs.rmSync(keyFile)
    const sent = await box.swarm(['send', 'crew', 'alice', 'are you there?'])
    expect(sent.code).toBe(3)
    expect(sent.stderr).toContain(keyFile)
    expect(sent.stderr).toContain('swarm team rekey crew')
    expect(fs.existsSync(keyFile)).toBe(false) // no silent new pair

    const r = await box.swarm(['team', 'rekey', 'crew'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('the old key is gone')
    expect(r.stdout).toContain('restarted with the new key: alice')
    expect(fs.existsSync(keyFile)).toBe(true)
    const after = await alicePid(box, pid)
    expect(after).not.toBe(pid)
    expect(isAlive(pid)).toBe(false)
    const killed = await box.swarm(['kill', 'crew', 'alice', '--timeout', '10000'])
    expectGracefulStop(box, killed.stdout)
  })
})
