import { type ChildProcess, spawn } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { isAlive } from '../../src/process/liveness.js'
import { endKeyHolders, leadKeyHolders } from '../../src/supervisor/lead-key-holders.js'
import type { TeamFile } from '../../src/teams/types.js'
import { waitFor } from '../support/wait.js'

/* The teammates of a gone Claude Code lead: found by their teammate argv, ended with SIGTERM, killed when they ignore it. */

// Found by argv among all the machine's processes: a team name of its own, so another run of this file (another checkout) is not seen.
const TEAM = `holders-${process.pid}`

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.pid && isAlive(c.pid)) process.kill(c.pid, 'SIGKILL')
})

/** A process whose argv looks like a Claude Code teammate's (`--agent-id name@team`, with or without a key). */
function teammate(name: string, opts: { key?: boolean; ignoreTerm?: boolean } = {}): ChildProcess {
  const code = `${opts.ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} process.stdout.write('up'); setInterval(() => {}, 1000)`
  const args = [
    '-e',
    code,
    '--',
    '--agent-id',
    `${name}@${TEAM}`,
    '--agent-name',
    name,
    ...(opts.key ? ['--lead-verify-key', '1796116536621.MCowBQYDK2VwAyEA'] : []),
  ]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] })
  children.push(child)
  return child
}

const up = (c: ChildProcess) => new Promise<void>((resolve) => c.stdout!.once('data', () => resolve()))

const config = (names: string[]): TeamFile =>
  ({
    name: TEAM,
    createdAt: 0,
    leadAgentId: `team-lead@${TEAM}`,
    members: ['team-lead', ...names].map((name) => ({
      name,
      agentId: `${name}@${TEAM}`,
      tmuxPaneId: '%1',
      cwd: '/',
      joinedAt: 0,
      subscriptions: [],
    })),
  }) as unknown as TeamFile

describe('lead key holders', () => {
  it('finds only members of the team whose process holds a --lead-verify-key', async () => {
    const a = teammate('a', { key: true })
    const b = teammate('b')
    const stranger = teammate('zed', { key: true })
    await Promise.all([up(a), up(b), up(stranger)])
    expect(leadKeyHolders(config(['a', 'b']))).toEqual([{ name: 'a', pid: a.pid }])
  })

  it('SIGTERM ends one at once; one that ignores it is killed after the grace time', async () => {
    const a = teammate('a', { key: true })
    const stubborn = teammate('s', { key: true, ignoreTerm: true })
    await Promise.all([up(a), up(stubborn)])
    const t0 = Date.now()
    // The grace is all `a` has to die of its SIGTERM (on a loaded machine, not in 300 ms for sure).
    const report = await endKeyHolders(leadKeyHolders(config(['a', 's'])), 1_500)
    expect(report).toEqual({ signalled: ['a'], killed: ['s'] })
    // The stubborn one cost the grace and one kill, nothing like a wait for it to give up.
    expect(Date.now() - t0).toBeLessThan(15_000)
    await waitFor('both gone', () => !isAlive(a.pid!) && !isAlive(stubborn.pid!))
  })
})
