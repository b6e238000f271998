import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createOutput } from '../../../src/agent/render.js'
import { assembleAgent } from '../../../src/agent/start.js'
import { readMemberState } from '../../../src/store/member-state.js'
import { createExecutor } from '../../../src/backends/registry.js'
import type { InProcessExecutor, TeammateContext } from '../../../src/backends/types.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { REPO, TEAM, leadStructured, makeFixture, modelRequests, type Fixture } from './helpers.js'
import { useAgentTeam, track } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'
import { isolatedEnv } from '../../support/home.js'

const run = promisify(execFile)

describe('a crash of one in-process teammate leaves the others working', () => {
  let loopback: LoopbackServer
  let fx: Fixture
  let executor: InProcessExecutor
  let pane = ''

  useAgentTeam({
    team: (l) => makeFixture(l, [{ name: 'alice' }, { name: 'bob' }]),
    onReady: (t) => {
      ;({ loopback, fx } = t)
      pane = ''
      executor = createExecutor('in-process', { env: fx.env, output: (text) => (pane += text) })
      track(
        'leader terminal',
        () => executor.killAll(),
        () => pane,
      )
    },
  })

  const teammate = (afterStart?: () => Promise<void>) => async (ctx: TeammateContext) => {
    const stream = new PassThrough()
    stream.on('data', (d: Buffer) => ctx.print(d.toString()))
    const { runtime } = await assembleAgent({
      team: TEAM,
      name: ctx.name,
      env: fx.env,
      signal: ctx.signal,
      output: createOutput({ stream, color: false }),
    })
    const running = runtime.run()
    await afterStart?.()
    return running
  }

  it('in this process: bob’s run() rejects in the middle of a turn; his runtime stops, alice still answers', async () => {
    loopback.setScenario({ agents: { alice: [{ text: 'Alice here.' }], bob: [{ text: 'never sent', delayMs: 5_000 }] } })
    await executor.spawn({ team: TEAM, name: 'alice', cwd: fx.cwd, run: teammate() })
    await executor.spawn({
      team: TEAM,
      name: 'bob',
      cwd: fx.cwd,
      run: teammate(async () => {
        await waitFor('bob’s request', () => modelRequests(loopback, 'bob').length === 1)
        throw new Error('bob tripped')
      }),
    })
    await sendTeamMessage({ team: TEAM, to: 'bob', text: 'long job', env: fx.env })
    expect(await executor.wait(`bob@${TEAM}`)).toEqual({ state: 'dead', reason: 'crashed: bob tripped' })
    expect(pane).toMatch(/bob │ crashed: Error: bob tripped/)
    // Dead means stopped: the abort reached his runtime, which cut its stream and exited.
    await waitFor('bob’s stream to be cut', () => modelRequests(loopback, 'bob')[0].clientClosed)
    await waitFor('bob’s state to say exited', async () => (await readMemberState(TEAM, 'bob', fx.env))?.status === 'exited')

    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'you ok?', env: fx.env })
    await waitFor('alice’s answer', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 1, 10_000, { output: () => pane })
    expect((await leadStructured(fx, 'idle_notification', 'alice'))[0].summary).toBe('Alice here.')
    expect(await executor.isActive(`alice@${TEAM}`)).toBe(true)
    expect(await leadStructured(fx, 'idle_notification', 'bob')).toHaveLength(0)
    expect(pane).toMatch(/alice │ Alice here\./)
  })

  it('in a leader process: an uncaught throw (mid-turn) and a floating rejection end only their teammates', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-rt-crash-'))
    try {
      const { stdout, stderr } = await run(process.execPath, [path.join(REPO, 'test/agent/runtime/fixtures/crash-leader.mjs'), dir], {
        timeout: 25_000,
        killSignal: 'SIGKILL',
        env: isolatedEnv(dir),
      }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`)
      })
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!)
      expect(result.states.bob, stderr).toEqual({ state: 'dead', reason: 'crashed: bob blew up' })
      expect(result.states.carol).toEqual({ state: 'dead', reason: 'crashed: carol floated' })
      expect(result.states.alice).toEqual({ state: 'alive' })
      expect(result.aliceNotes).toEqual(['Alice, first.', 'Alice, after the crashes.'])
      expect(result.bobNotes).toBe(0)
      expect(result.bobStreamCut).toBe(true)
      expect(result.bobStatus).toBe('exited')
      expect(result.lines.join('')).toMatch(/bob │ crashed \(uncaughtException\): Error: bob blew up/)
      expect(result.lines.join('')).toMatch(/carol │ crashed \(unhandledRejection\): Error: carol floated/)
    } finally {
      await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
    }
  })
})
