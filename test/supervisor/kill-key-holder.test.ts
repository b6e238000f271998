import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isAlive } from '../../src/process/liveness.js'
import { killTeammate } from '../../src/supervisor/stop.js'
import { addMember, createTeam, readTeam, updateTeam } from '../../src/teams/team-store.js'
import { STOPPED_FIELD } from '../../src/backends/directory.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { reapTmux } from '../support/tmux.js'

/**
 * `swarm kill` of a teammate whose Claude Code lead is gone: it holds that lead's
 * --lead-verify-key and would call swarm's unsigned shutdown_request forged, so it is not asked
 * (nor waited for) but ended with SIGTERM, as `team delete` ends it (one function for both).
 */
// Key holders are found machine-wide by their argv: a team name no other test file uses.
const TEAM = `kill-holder-${process.pid}`

describe("swarm kill of a gone Claude Code lead's teammate", () => {
  let h: IsolatedHome
  const children: ChildProcess[] = []
  beforeEach(() => {
    h = isolatedHome('swarm-kill-key-holder-')
  })
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.pid && isAlive(c.pid)) process.kill(c.pid, 'SIGKILL')
    await reapTmux(h.env)
    await h.cleanup()
  })

  /** A process with a Claude Code teammate's argv, holding a lead key; it reads no inbox (a shutdown request never reaches it). */
  function keyHolder(name: string, opts: { ignoreTerm?: boolean } = {}): Promise<ChildProcess> {
    const code = `${opts.ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} process.stdout.write('up'); setInterval(() => {}, 1000)`
    const argv = ['-e', code, '--', '--agent-id', `${name}@${TEAM}`, '--agent-name', name, '--lead-verify-key', '1796116536621.MCowBQYDK2VwAyEA']
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'ignore'] })
    children.push(child)
    return new Promise((resolve) => child.stdout!.once('data', () => resolve(child)))
  }

  /** A team as a Claude Code lead writes it (leadProcess), whose lead has exited. */
  async function claudeLedTeam(names: string[]): Promise<void> {
    await createTeam({ name: TEAM, cwd: h.project }, h.env)
    for (const name of names) await addMember(TEAM, { name, backendType: 'tmux', tmuxPaneId: '%7', isActive: true }, h.env)
    const gone = spawnSync(process.execPath, ['-e', '0']).pid
    await updateTeam(
      TEAM,
      (t) => {
        t.leadProcess = { pid: gone }
        t.members[0].tmuxPaneId = 'leader'
      },
      h.env,
    )
  }

  it('is ended with SIGTERM at once, not after its timeout, and stays stopped', async () => {
    const cw = await keyHolder('cw')
    await claudeLedTeam(['cw'])
    const t0 = Date.now()
    const r = await killTeammate(TEAM, 'cw', { env: h.env, timeoutMs: 20_000 })
    expect(r).toEqual({ outcome: 'signalled' })
    expect(Date.now() - t0, 'well before the 20 s timeout').toBeLessThan(12_000)
    expect(isAlive(cw.pid!)).toBe(false)
    const m = (await readTeam(TEAM, h.env)).members.find((x) => x.name === 'cw')!
    expect(m.isActive).toBe(false)
    expect(m[STOPPED_FIELD]).toBe(true)
  }, 30_000)

  it('one that ignores SIGTERM is killed after the grace time; another teammate is left alone', async () => {
    const stubborn = await keyHolder('s', { ignoreTerm: true })
    const other = await keyHolder('o')
    await claudeLedTeam(['s', 'o'])
    const r = await killTeammate(TEAM, 's', { env: h.env, timeoutMs: 20_000 })
    expect(r).toEqual({ outcome: 'killed' })
    expect(isAlive(stubborn.pid!)).toBe(false)
    expect(isAlive(other.pid!)).toBe(true)
  }, 30_000)
})
