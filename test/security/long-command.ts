import { PassThrough } from 'node:stream'
import { expect } from 'vitest'
import type { ListedRequest } from '../../src/asks/store.js'
import { shortRequestId } from '../../src/home/request-id.js'
import { LeaderConsole, type TeamControl } from '../../src/leader/console.js'
import type { AgentTeam } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'

/**
 * Issue 23, finding 9, for agent-CLI teammates: a long command (429 characters, its end unlike its
 * start) a CLI asks for, and what the lead must see of it — shared by the fake CLI's test and real
 * Codex's. The console is the real leader console on streams, as in its pane.
 */
export const LONG = `npm test -- ${Array.from({ length: 24 }, (_, i) => `--opt${i}=value${i}`).join(' ')} --testTimeout=60000 --bail --setupFiles=./.cache/x.js`

export interface ConsoleOnStreams {
  text(): string
  /** The human at the keyboard. */
  type(line: string): void
  waitFor(what: string | RegExp): Promise<true | RegExpExecArray>
  close(): Promise<void>
}

/** What the checks need of a team: its environment and the swarm CLI with it (AgentTeam, or any test's own). */
export type AskingTeam = Pick<AgentTeam, 'env' | 'swarm'>

export function openConsole(t: AskingTeam, team = 't'): ConsoleOnStreams {
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
  const c = new LeaderConsole({ team, env: t.env, input, output, control, color: false, pendingPollMs: 100, promptSettleMs: 0 })
  const done = c.run()
  return {
    text: () => text,
    type: (line) => input.write(line + '\n'),
    waitFor: (what) =>
      waitFor(`console: ${what}`, () => (typeof what === 'string' ? text.includes(what) : what.exec(text)), 15_000, { output: () => text }),
    close: async () => {
      input.end()
      await done
    },
  }
}

/**
 * `pending` (a request for `command`, which holds LONG whole) reaches the human whole: the prompt
 * shows the command to its end; `/requests` and `swarm perms` show its start and how many of its
 * characters are left, counted from the command itself, and where to read it; `swarm perms show`
 * shows it whole. Answers it with `y` at the console.
 */
export async function expectShownWhole(t: AskingTeam, c: ConsoleOnStreams, pending: ListedRequest, command: string, team = 't'): Promise<void> {
  expect(command).toContain(LONG)
  const short = shortRequestId(pending.id)
  const who = `${pending.agent} wants to use ${pending.toolName}:`
  await c.waitFor(`? [${short}] ${who} ${command}\n`)
  expect(c.text()).not.toMatch(/--ba(\.\.\.|…)/)
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const start = esc(command.slice(0, command.indexOf('npm test')))
  c.type('/requests')
  expectCut(
    command,
    await c.waitFor(
      new RegExp(
        `${short} {2}${pending.id} {2}${pending.agent} {2}${pending.toolName} {2}(${start}npm test -- .*) … \\(\\+(\\d+) chars: /show ${short}\\)`,
      ),
    ),
  )
  const list = await t.swarm(['perms', team])
  expect(list.code, list.stderr).toBe(0)
  expectCut(command, new RegExp(`(${start}npm test -- \\S.*?) … \\(\\+(\\d+) chars: swarm perms show ${team} ${short}\\)`).exec(list.stdout))
  const show = await t.swarm(['perms', 'show', team, short])
  expect(show.code, show.stderr).toBe(0)
  expect(show.stdout).toContain(command)
  c.type('y')
  await c.waitFor(`approved ${short}: ${pending.agent} ${pending.toolName}`)
}

/** A cut of `command`: its start, and the count of what is left, which adds up to the whole. */
function expectCut(command: string, m: RegExpExecArray | true | null): void {
  expect(m).toBeInstanceOf(Array)
  const [, start, left] = m as RegExpExecArray
  expect(command.startsWith(start), start).toBe(true)
  expect([...start].length + Number(left)).toBe([...command].length)
}
