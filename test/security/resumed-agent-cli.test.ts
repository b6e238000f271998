import fs from 'node:fs/promises'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'
import { bashCliAdapter, writeProjectAdapter } from '../support/bash-cli.js'

const run = promisify(execFile)

/**
 * Adversarial review: after `team resume`, a hostile agent-CLI teammate is confined again — the
 * team files hidden, the files swarm wrote for it read-only — with a new relay (a new token), so
 * what it learnt before the crash is worth nothing.
 */
const PROBE = String.raw`
out="$PWD/runs.out"
check() { if ( "$@" ) >/dev/null 2>&1; then echo yes; else echo no; fi; }
token=$(sed -n 's/.*"token": *"\([^"]*\)".*/\1/p' "$PROBE_HOME/relay/endpoint.json" | head -1)
team=$(check cat "$SWARM_HOME/teams/t/config.json")
hooks=$(check sh -c 'echo x >> "$PROBE_HOME/probe.sh"')
echo "run token=$token team=$team write-own-files=$hooks sandbox=$SWARM_SANDBOX" >> "$out"
exec sleep 600
`

const ADAPTER = bashCliAdapter(PROBE, { env: { PROBE_HOME: '{{configDir}}' } })

describe('adversarial: a resumed agent-CLI teammate', () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
  }, 30_000)

  it('is sandboxed again, with the same read-only files and a new relay token', async () => {
    t = await agentTeam()
    await writeProjectAdapter(t.work, 'probe', ADAPTER)
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'probe', '--backend', 'tmux'])
    expect(spawned.code, spawned.stderr).toBe(0)
    const out = path.join(t.work, 'runs.out')
    const runs = async () => (await fs.readFile(out, 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith('run '))
    await waitFor('the first run', async () => (await runs()).length === 1, 30_000)
    await run('tmux', ['-L', t.socket, 'kill-server'], { env: t.env })
    const state = async () =>
      (JSON.parse((await t.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; state: string }> }).members.find(
        (m) => m.name === 'fay',
      )?.state
    await waitFor('fay dead', async () => (await state()) === 'dead', 30_000, { intervalMs: 200 })
    const resumed = await t.swarm(['team', 'resume', 't', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    await waitFor('the resumed run', async () => (await runs()).length === 2, 30_000)
    const [before, after] = (await runs()).map((l) =>
      Object.fromEntries(
        l
          .slice(4)
          .split(' ')
          .map((kv) => kv.split('=') as [string, string]),
      ),
    )
    for (const r of [before, after]) expect(r).toMatchObject({ team: 'no', 'write-own-files': 'no', sandbox: '1' })
    expect(before.token.length).toBeGreaterThan(16)
    expect(after.token).not.toBe(before.token)
  }, 120_000)
})
