import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AgentTeam } from '../agents/helpers.js'

/**
 * The fake interactive CLI of the courier tests (fixtures/fake-cli.mjs) as a user-defined adapter
 * `fake` in the team's project — no code of swarm names it — and the prompts it was given.
 */

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fake-cli.mjs')

/** Writes `.claude/swarm-agents/fake.yaml` (FAKE_MODE `mode`); returns the file its submissions go to. */
export async function fakeAdapter(t: AgentTeam, mode = ''): Promise<string> {
  // Inside its cwd: the CLI runs in swarm's sandbox, which lets it write only there (and its own home).
  const log = path.join(t.work, 'submissions.jsonl')
  const yaml = `
binary: node
command: ['${process.execPath}', '${FAKE}']
env:
  FAKE_MODE: '${mode}'
  FAKE_LOG: '${log}'
  FAKE_HOOK_SESSION_START: '{{hook:session-start}}'
  FAKE_HOOK_PROMPT_SUBMIT: '{{hook:prompt-submit}}'
  FAKE_HOOK_STOP: '{{hook:stop}}'
delivery: { method: paste, settleMs: 100, confirm: hook }
hookEvents: { Submit: prompt-submit, Stop: stop, Start: session-start }
quit: { keys: [C-c], graceMs: 2000 }
`
  await fs.mkdir(path.join(t.work, '.claude', 'swarm-agents'), { recursive: true })
  await fs.writeFile(path.join(t.work, '.claude', 'swarm-agents', 'fake.yaml'), yaml)
  return log
}

/** The prompts the fake CLI submitted, in order. */
export async function submissions(log: string): Promise<string[]> {
  const text = await fs.readFile(log, 'utf8').catch(() => '')
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string)
}
