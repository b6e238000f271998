import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { listPending } from '../../src/asks/store.js'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { bashCliAdapter, writeProjectAdapter } from '../support/bash-cli.js'
import { waitFor } from '../support/wait.js'
import { type ConsoleOnStreams, expectShownWhole, LONG, openConsole } from './long-command.js'
import { pathWithoutBwrap } from './sandbox-helpers.js'

/**
 * Issue 23, finding 9, for an agent-CLI teammate: its CLI asks for a long shell command through
 * its permission hook the way Gemini CLI does (the hook command swarm wrote for it, the call's
 * JSON on its stdin, relayed by its pane wrapper: from inside swarm's sandbox, or without bwrap
 * from a CLI that runs unconfined by design). Its 429 characters reach the lead whole: the console
 * prompt shows the command to its end; `/requests` and `swarm perms` say how much is cut and how to
 * read it, `swarm perms show` shows it whole; the answer at the console reaches the CLI.
 */

const PROBE = String.raw`
printf '%s\n' "$PERM_HOOK" > "$PWD/hook.cmd"
printf '{"tool_name":"run_shell_command","tool_input":{"command":"%s"}}' "$LONG_CMD" | sh -c "$PERM_HOOK" > "$PWD/hook.out" 2> "$PWD/hook.err"
echo "exit $?" > "$PWD/hook.done"
exec sleep 600
`

/** A Gemini-style CLI: its shell tool and permission replies as Gemini CLI's adapter declares them. */
const ADAPTER =
  bashCliAdapter(PROBE, { env: { PERM_HOOK: '{{hook:permission-request}}', LONG_CMD: '{{env:LONG_CMD}}' } }) +
  [
    'permission:',
    '  allow: { json: { decision: allow } }',
    '  deny: { json: { decision: deny, reason: "{{message}}" } }',
    'shellTools: [run_shell_command]',
    '',
  ].join('\n')

describe.each(['bwrap present', 'bwrap absent'] as const)(
  'a long command an agent CLI asks for reaches the human whole (issue 23 finding 9, %s)',
  (variant) => {
    let t: AgentTeam
    let console_: ConsoleOnStreams | undefined
    afterEach(async () => {
      await console_?.close()
      console_ = undefined
      await t?.cleanup()
    }, 30_000)

    it("the prompt shows it to its end; /requests and swarm perms say how to read it, perms show has it whole; the console's answer reaches the CLI", async () => {
      t = await agentTeam()
      if (variant === 'bwrap absent') t.env.PATH = pathWithoutBwrap(path.join(t.dir, 'nobwrap'))
      t.env.LONG_CMD = LONG
      await writeProjectAdapter(t.work, 'gemlike', ADAPTER)
      expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
      const c = openConsole(t)
      console_ = c
      await c.waitFor('swarm leader')
      const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'gemlike', '--backend', 'tmux'])
      expect(spawned.code, spawned.stderr).toBe(0)

      const pending = await waitFor(
        "fay's request",
        async () => (await listPending('t', { env: t.env })).requests.find((r) => r.agent === 'fay'),
        30_000,
        { output: () => c.text() },
      )
      expect(pending.input).toEqual({ command: LONG })
      // Relayed from inside swarm's sandbox, or (bwrap absent) run by a CLI that runs unconfined, and says so.
      const status = JSON.parse((await t.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; sandbox?: string }> }
      expect(status.members.find((m) => m.name === 'fay')?.sandbox).toBe(variant === 'bwrap present' ? 'sandboxed' : 'unavailable')
      expect(await fs.readFile(path.join(t.work, 'hook.cmd'), 'utf8')).toMatch(
        / relay \S+endpoint\.json -- hook permission-request --team t --name fay /,
      )
      await expectShownWhole(t, c, pending, LONG)
      await waitFor(
        'the hook to answer',
        async () => (await fs.readFile(path.join(t.work, 'hook.done'), 'utf8').catch(() => '')).includes('exit'),
        15_000,
      )
      expect(JSON.parse(await fs.readFile(path.join(t.work, 'hook.out'), 'utf8'))).toEqual({ decision: 'allow' })
    }, 90_000)
  },
)
