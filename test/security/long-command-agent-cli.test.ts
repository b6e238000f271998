import fs from 'node:fs/promises'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { listPending, type ListedRequest } from '../../src/asks/store.js'
import { shortRequestId } from '../../src/home/request-id.js'
import { LeaderConsole, type TeamControl } from '../../src/leader/console.js'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { bashCliAdapter, writeProjectAdapter } from '../support/bash-cli.js'
import { waitFor } from '../support/wait.js'
import { pathWithoutBwrap } from './sandbox-helpers.js'

/**
 * Issue 23, finding 9, for an agent-CLI teammate: its CLI asks for a long shell command through
 * its permission hook the way Gemini CLI does (the hook command swarm wrote for it, the call's
 * JSON on its stdin, relayed by its pane wrapper: from inside swarm's sandbox, or without bwrap
 * from a CLI that runs unconfined by design). Its 429 characters reach the lead whole: the console
 * prompt shows the command to its end; `/requests` and `swarm perms` say how much is cut and how to
 * read it, `swarm perms show` shows it whole; the answer at the console reaches the CLI.
 */
const LONG = `npm test -- ${Array.from({ length: 24 }, (_, i) => `--opt${i}=value${i}`).join(' ')} --testTimeout=60000 --bail --setupFiles=./.cache/x.js`

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

/** The leader console on streams, as in its pane; `type` is the human at the keyboard. */
function openConsole(t: AgentTeam) {
  const input = new PassThrough()
  const output = new PassThrough()
  let text = ''
  output.on('data', (d) => (text += String(d)))
  // What the console would start or stop: not used here (the teammate is already running).
  const control: TeamControl = {
    spawn: async (name) => `started ${name}`,
    kill: async (name) => `stopped ${name}`,
    closed: async () => undefined,
    status: async () => 'status',
  }
  const c = new LeaderConsole({ team: 't', env: t.env, input, output, control, color: false, pendingPollMs: 100, promptSettleMs: 0 })
  const done = c.run()
  return {
    text: () => text,
    type: (line: string) => input.write(line + '\n'),
    waitFor: (what: string | RegExp) =>
      waitFor(`console: ${what}`, () => (typeof what === 'string' ? text.includes(what) : what.exec(text)), 15_000, { output: () => text }),
    close: () => {
      input.end()
      return done
    },
  }
}

/** A cut of LONG: its start, and the count of what is left, which adds up to the whole command. */
function expectCut(m: RegExpExecArray | null | true): void {
  expect(m).toBeInstanceOf(Array)
  const [, start, left] = m as RegExpExecArray
  expect(LONG.startsWith(start), start).toBe(true)
  expect(start.length + Number(left)).toBe(LONG.length)
}

describe.each(['bwrap present', 'bwrap absent'] as const)(
  'a long command an agent CLI asks for reaches the human whole (issue 23 finding 9, %s)',
  (variant) => {
    let t: AgentTeam
    let console_: ReturnType<typeof openConsole> | undefined
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
      const c = (console_ = openConsole(t))
      await c.waitFor('swarm leader')
      const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'gemlike', '--backend', 'tmux'])
      expect(spawned.code, spawned.stderr).toBe(0)

      const pending = await waitFor<ListedRequest>(
        "fay's request",
        async () => (await listPending('t', { env: t.env })).requests.find((r) => r.agent === 'fay'),
        30_000,
        { output: async () => (await fs.readFile(path.join(t.work, 'hook.err'), 'utf8').catch(() => '')) + c.text() },
      )
      expect(pending.input).toEqual({ command: LONG })
      // Relayed from inside swarm's sandbox, or (bwrap absent) run by a CLI that runs unconfined, and says so.
      const status = JSON.parse((await t.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; sandbox?: string }> }
      expect(status.members.find((m) => m.name === 'fay')?.sandbox).toBe(variant === 'bwrap present' ? 'sandboxed' : 'unavailable')
      expect(await fs.readFile(path.join(t.work, 'hook.cmd'), 'utf8')).toMatch(
        / relay \S+endpoint\.json -- hook permission-request --team t --name fay /,
      )
      const short = shortRequestId(pending.id)
      await c.waitFor(`? [${short}] fay wants to use run_shell_command: ${LONG}\n`)
      expect(c.text()).not.toMatch(/--ba(\.\.\.|…)/)

      // Each short place: the command's start, and how many of its characters are left — counted from the command itself.
      c.type('/requests')
      const listed = await c.waitFor(
        new RegExp(`${short} {2}${pending.id} {2}fay {2}run_shell_command {2}(npm test -- .*) … \\(\\+(\\d+) chars: /show ${short}\\)`),
      )
      expectCut(listed)
      const list = await t.swarm(['perms', 't'])
      expect(list.code, list.stderr).toBe(0)
      expectCut(new RegExp(`(npm test -- \\S.*?) … \\(\\+(\\d+) chars: swarm perms show t ${short}\\)`).exec(list.stdout))
      const show = await t.swarm(['perms', 'show', 't', short])
      expect(show.code, show.stderr).toBe(0)
      expect(show.stdout).toContain(LONG)

      c.type('y')
      await c.waitFor(`approved ${short}: fay run_shell_command`)
      await waitFor(
        'the hook to answer',
        async () => (await fs.readFile(path.join(t.work, 'hook.done'), 'utf8').catch(() => '')).includes('exit'),
        15_000,
      )
      expect(JSON.parse(await fs.readFile(path.join(t.work, 'hook.out'), 'utf8'))).toEqual({ decision: 'allow' })
    }, 90_000)
  },
)
