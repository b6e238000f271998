import fs from 'node:fs/promises'
import path from 'node:path'
import { expect } from 'vitest'
import type { AgentTeam } from '../agents/helpers.js'
import { waitFor } from './wait.js'

/**
 * The cheapest real hostile teammate: a user-defined adapter whose "CLI" is a bash script, run
 * by swarm exactly as any agent CLI (its pane wrapper, its relay, its sandbox). `env` and `files`
 * are added to the adapter as they are (placeholders such as `{{configDir}}` expand).
 */
export function bashCliAdapter(script: string, o: { env?: Record<string, string>; files?: Array<Record<string, unknown>> } = {}): string {
  const files = [{ path: 'probe.sh', text: script }, ...(o.files ?? [])]
  return [
    'binary: bash',
    "command: ['bash', '{{configDir}}/probe.sh']",
    ...(o.env ? [`env: ${JSON.stringify(o.env)}`] : []),
    `files: ${JSON.stringify(files)}`,
    // Its hooks are never called: nothing is delivered after its first prompt (in its argv).
    'delivery: { method: paste, settleMs: 100, confirm: hook }',
    'hookEvents: { Submit: prompt-submit, Done: stop }',
    'quit: { signal: SIGTERM, graceMs: 1000 }',
    '',
  ].join('\n')
}

/** Writes `yaml` as the project's adapter `<kind>` (`<work>/.claude/swarm-agents/<kind>.yaml`). */
export async function writeProjectAdapter(work: string, kind: string, yaml: string): Promise<void> {
  const dir = path.join(work, '.claude', 'swarm-agents')
  await fs.mkdir(dir, { recursive: true })
  await fs.writeFile(path.join(dir, `${kind}.yaml`), yaml)
}

/**
 * Spawns `fay`, a teammate of the project adapter `probe` (tmux), waits for its script to write
 * `done` to `probe.out` in the work dir, and returns the `key: value` lines it wrote there.
 */
export async function runProbe(t: Pick<AgentTeam, 'swarm' | 'work'>): Promise<Record<string, string>> {
  const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'probe', '--backend', 'tmux'])
  expect(spawned.code, spawned.stderr).toBe(0)
  const out = path.join(t.work, 'probe.out')
  await waitFor('the probe to finish', async () => (await fs.readFile(out, 'utf8').catch(() => '')).includes('done'), 30_000)
  const lines = (await fs.readFile(out, 'utf8')).split('\n').filter((l) => l.includes(': '))
  return Object.fromEntries(lines.map((l) => l.split(': ') as [string, string]))
}
