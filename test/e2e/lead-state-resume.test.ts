import type { ChildProcess } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { LEAD_NAME } from '../../src/home/paths.js'
import { isAlive } from '../../src/process/liveness.js'
import { readMemberState } from '../../src/store/member-state.js'
import { BIN, useModelSandbox, type Sandbox } from './helpers.js'
import { waitFor } from '../support/wait.js'

/**
 * team-lead's state.json is written by the leader (idle at start, exited at the end) and by the
 * lead agent in between, in the same process. The leader's writes merge into the lead agent's:
 * the lead's model, usage and cost survive the leader's exit, and a `team resume` starts from them.
 */
describe('the lead agent’s usage across a leader exit', () => {
  let sb: Sandbox
  useModelSandbox({ fallback: { text: 'Noted.' } }, (t) => ({ sb } = t))

  const startLeader = async (): Promise<{ leader: ChildProcess; out: () => string }> => {
    const leader = sb.start(process.execPath, [BIN, 'leader', 'boss'])
    let seen = ''
    leader.stdout!.on('data', (d) => (seen += String(d)))
    leader.stderr!.on('data', (d) => (seen += String(d)))
    await waitFor('the console', () => seen.includes('swarm leader — team boss'), 15_000, { output: () => seen })
    return { leader, out: () => seen }
  }
  const quit = async (leader: ChildProcess, out: () => string) => {
    leader.stdin!.write('/quit\n')
    await waitFor('the leader gone', () => !isAlive(leader.pid!), 10_000, { output: out })
  }
  const lead = () => readMemberState('boss', LEAD_NAME, sb.env)

  it('keeps model, usage and costUsd when the leader exits; the next leader’s lead counts on from them', async () => {
    expect((await sb.swarm(['team', 'create', 'boss', '--no-start', '--cwd', sb.project])).code).toBe(0)
    const first = await startLeader()
    first.leader.stdin!.write('hello lead\n')
    const spent = await waitFor('the lead’s usage', async () => ((await lead())?.status === 'idle' ? (await lead())?.usage : undefined), 15_000, {
      output: first.out,
    })
    const before = await lead()
    await quit(first.leader, first.out)

    const after = await lead()
    expect(after?.status).toBe('exited')
    expect(after).toMatchObject({ model: before?.model, usage: spent, costUsd: before?.costUsd, turns: before?.turns })
    expect(after?.model).toBeDefined()

    const second = await startLeader()
    second.leader.stdin!.write('hello again\n')
    await waitFor('the lead’s second turn', async () => ((await lead())?.turns ?? 0) > (before?.turns ?? 0), 15_000, { output: second.out })
    const resumed = await lead()
    expect(resumed?.usage?.outputTokens).toBeGreaterThan(spent.outputTokens)
    await quit(second.leader, second.out)
  }, 60_000)
})
