import { afterEach, describe, expect, it } from 'vitest'
import { listPending } from '../../src/asks/store.js'
import { type ConsoleOnStreams, expectShownWhole, LONG, openConsole } from '../security/long-command.js'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli } from './helpers.js'

/**
 * Issue 23, finding 9, for real Codex: its model asks to run a long command outside Codex's own
 * sandbox (`require_escalated`), so Codex asks through its PermissionRequest hook (`swarm hook`,
 * run by Codex itself: Codex is confined by its own sandbox, not swarm's). The lead's console
 * prompt shows the command to its end; `/requests` and `swarm perms` say how much is cut and how
 * to read it, `swarm perms show` shows it whole (test/security/long-command.ts).
 */
const NAME = 'codex-mate'

describe.skipIf(!hasCli('codex'))('a long command real Codex asks for reaches the human whole (issue 23 finding 9)', () => {
  let t: AgentTeam
  let console_: ConsoleOnStreams | undefined
  afterEach(async () => {
    await console_?.close()
    await t?.cleanup()
  }, 30_000)

  it('the prompt shows it to its end; /requests and swarm perms say how to read it, perms show has it whole', async () => {
    t = await agentTeam({
      rules: [
        {
          userMatches: 'LONG-ASK',
          reply: { tool: 'exec_command', args: { cmd: LONG, sandbox_permissions: 'require_escalated', justification: 'the test asks for it' } },
        },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const c = openConsole(t)
    console_ = c
    await c.waitFor('swarm leader')
    const spawned = await t.swarm(['spawn', 't', NAME, '--agent', 'codex', '--model', 'loopback', '--backend', 'tmux', '--prompt', 'LONG-ASK now'])
    expect(spawned.code, spawned.stderr).toBe(0)
    const pending = await waitFor(
      "Codex's request",
      async () => (await listPending('t', { env: t.env })).requests.find((r) => r.agent === NAME && JSON.stringify(r.input).includes('--setupFiles')),
      90_000,
      { output: () => c.text() },
    )
    const command = pending.input.command
    expect(typeof command, JSON.stringify(pending.input)).toBe('string')
    await expectShownWhole(t, c, pending, command as string)
    await waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
  }, 180_000)
})
