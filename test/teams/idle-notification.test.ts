import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { IDLE_SUMMARY_MAX } from '../../src/teams/idle-notification.js'
import { BIN, TEAM, leadStructured, makeFixture, startAgent, type Fixture } from '../agent/runtime/helpers.js'
import { useAgentTeam } from '../support/agent-team.js'
import { readMemberState } from '../../src/store/member-state.js'
import { waitFor } from '../support/wait.js'

/**
 * Both member kinds go idle with the same idle_notification: swarm's agent (on the loopback model)
 * and an agent CLI's `swarm hook stop` (the real binary). Its summary is capped at 200 characters
 * after any prefix the turn's outcome adds ("turn failed: ", "stopped after … — partial: ").
 */
let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({
  team: (l) => makeFixture(l, [{ name: 'alice' }, { name: 'gem', agent: 'gemini' }]),
  onReady: (t) => ({ loopback, fx } = t),
})

const LONG = `${'word '.repeat(80)}end`

function hookStop(name: string, payload: unknown): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'hook', 'stop', '--team', TEAM, '--name', name, '--agent', 'gemini'], { env: fx.env, cwd: fx.cwd })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
    child.stdin.end(JSON.stringify(payload))
  })
}

const keys = (o: object) => Object.keys(o).sort()

describe('the idle notification of both member kinds', () => {
  it('swarm agent (partial turn, failed turn) and agent CLI stop hook: the same shape, every summary capped', async () => {
    loopback.setScenario({
      agents: {
        alice: [
          {
            content: [
              { type: 'text', text: LONG },
              { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
            ],
          },
          { error: { status: 400, type: 'invalid_request_error', message: LONG } },
        ],
      },
    })
    await fs.mkdir(path.join(fx.cwd, '.claude/agents'), { recursive: true })
    await fs.writeFile(
      path.join(fx.cwd, '.claude/agents/once.md'),
      '---\nname: once\ndescription: one model call a turn\nmaxTurns: 1\n---\nYou work.\n',
    )
    const alice = await startAgent(fx, 'alice', { agentType: 'once' })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'go', env: fx.env })
    await waitFor('the partial turn’s note', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 1, 10_000, {
      output: alice.out,
    })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'again', env: fx.env })
    await waitFor('the failed turn’s note', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length === 2, 10_000, {
      output: alice.out,
    })
    const [partial, failed] = await leadStructured(fx, 'idle_notification', 'alice')
    expect(partial.summary).toMatch(/^stopped after 1 model calls \(maxTurns\) — partial: word word .*\.\.\.$/)
    expect(failed.summary).toMatch(/^turn failed: invalid_request_error .*\.\.\.$/)

    const ran = await hookStop('gem', { prompt_response: LONG })
    expect(ran.code, ran.stderr).toBe(0)
    const [cli] = await leadStructured(fx, 'idle_notification', 'gem')
    expect(cli.summary).toMatch(/^word word .*\.\.\.$/)
    expect((await readMemberState(TEAM, 'gem', fx.env))?.status).toBe('idle')

    for (const note of [partial, failed, cli]) expect(note.summary!.length).toBe(IDLE_SUMMARY_MAX)
    expect(keys(cli)).toEqual(keys(partial))
    expect(cli).toMatchObject({ type: 'idle_notification', from: 'gem', idleReason: 'available' })
    expect(partial).toMatchObject({ type: 'idle_notification', from: 'alice', idleReason: 'available' })
    // A second stop while idle is no transition: nothing more is sent.
    expect((await hookStop('gem', { prompt_response: 'again' })).code).toBe(0)
    expect(await leadStructured(fx, 'idle_notification', 'gem')).toHaveLength(1)
  })
})
