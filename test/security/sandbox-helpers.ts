import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { answerRequest } from '../../src/permissions/requests/broker.js'
import { listPending } from '../../src/asks/store.js'
import { createTeam } from '../../src/teams/team-store.js'
import { createWorktree } from '../../src/worktrees/worktree.js'
import { BIN, type Fixture, TEAM, nudge, startInProcess, toolResult } from '../permissions/requests/bubbling-helpers.js'
import { afterTest } from '../support/agent-team.js'
import { isolatedHome } from '../support/home.js'
import { GIT_ENV, initRepo } from '../worktrees/git-repo.js'
import { waitFor } from '../support/wait.js'

/**
 * A hostile teammate: alice works in a git worktree swarm made for her, with the real tools and
 * permission layer, and tries a list of attacks in one turn. Every request she makes is denied
 * as it shows up, so each attack ends as "asked", "refused" (an error result) or "ran".
 */
export interface HostileFixture extends Fixture {
  base: string
  repo: string
  worktree: string
  /** Where an executed fsmonitor / hook would leave its trace. */
  marker: string
}

/**
 * `aliceIn: 'main'` puts alice in the main checkout and the recorded worktree is bob's (not
 * running): her writes to the repository's own `.git` then reach every worktree of it. Removed
 * after the test (test/support/agent-team.ts `useLoopback`).
 */
export async function makeHostileFixture(
  loopback: LoopbackServer,
  opts: { path?: string; aliceIn?: 'worktree' | 'main' } = {},
): Promise<HostileFixture> {
  const iso = isolatedHome('swarm-hostile-', {
    ...GIT_ENV,
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: loopback.url,
    ...(opts.path !== undefined ? { PATH: opts.path } : {}),
  })
  const { base, home, env } = iso
  const repo = iso.project
  initRepo(repo, env)
  const inMain = opts.aliceIn === 'main'
  const wt = await createWorktree({ repoDir: repo, team: TEAM, name: inMain ? 'bob' : 'alice', env })
  const members = inMain
    ? [
        { name: 'alice', cwd: repo },
        { name: 'bob', cwd: wt.path, worktreePath: wt.path },
      ]
    : [{ name: 'alice', cwd: wt.path, worktreePath: wt.path }]
  await createTeam({ name: TEAM, cwd: repo, members }, env)
  await ensureTeamKeys(TEAM, env)
  afterTest(iso.cleanup)
  return {
    base,
    home,
    cwd: inMain ? repo : wt.path,
    env,
    repo,
    worktree: wt.path,
    marker: path.join(base, 'MARKER'),
    cleanup: iso.cleanup,
  }
}

/** One attack: a tool call, and what must not have happened afterwards. */
export interface Attack {
  id: string
  tool: string
  input: Record<string, unknown>
}

export type Outcome = 'asked' | 'refused' | 'ran'

/**
 * Runs `attacks` as alice's tool calls, one per model step, in `mode`; denies every request that
 * appears. Returns each attack's outcome and its tool result.
 */
export async function runAttacks(
  loopback: LoopbackServer,
  fx: HostileFixture,
  mode: string,
  attacks: Attack[],
  allow: string[] = [],
): Promise<Map<string, { outcome: Outcome; result: string }>> {
  loopback.requests.length = 0
  const steps: ScenarioInput = {
    agents: {
      alice: [...attacks.map((a) => ({ content: [{ type: 'tool_use' as const, id: a.id, name: a.tool, input: a.input }] })), { text: 'done' }],
    },
  }
  loopback.setScenario(steps)
  const agent = await startInProcess(fx, { mode, layer: allow.length ? { cli: { allow } } : {} })
  const asked = new Set<string>()
  try {
    await nudge(fx, 'attack')
    await waitFor(
      `alice to finish ${attacks.length} attacks in ${mode}`,
      async () => {
        for (const r of (await listPending(TEAM, { env: fx.env })).requests) {
          if (r.toolUseId) asked.add(r.toolUseId)
          await answerRequest(TEAM, r.id, { kind: 'deny', by: 'tester' }, { env: fx.env }).catch(() => undefined)
        }
        return attacks.every((a) => toolResult(loopback, a.id) !== undefined)
      },
      60_000,
      { output: agent.pane },
    )
  } finally {
    await agent.stop()
  }
  const out = new Map<string, { outcome: Outcome; result: string }>()
  for (const a of attacks) {
    const r = toolResult(loopback, a.id)!
    out.set(a.id, { outcome: asked.has(a.id) ? 'asked' : r.isError ? 'refused' : 'ran', result: r.content })
  }
  return out
}

/** Runs the swarm CLI (dist) with the fixture's environment. */
export function swarm(fx: HostileFixture, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: fx.env, cwd: fx.repo, encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/**
 * A PATH without bwrap: a directory of links to every program on the current PATH but bwrap.
 * Simulates a machine where bubblewrap is not installed.
 */
export function pathWithoutBwrap(dir: string): string {
  fs.mkdirSync(dir, { recursive: true })
  for (const d of (process.env.PATH ?? '').split(path.delimiter)) {
    let names: string[] = []
    try {
      names = fs.readdirSync(d)
    } catch {
      continue // a PATH entry that does not exist
    }
    for (const n of names) {
      if (n === 'bwrap' || fs.existsSync(path.join(dir, n))) continue
      fs.symlinkSync(path.join(d, n), path.join(dir, n))
    }
  }
  return dir
}

/** The modes a teammate can be started in. */
export const ALL_MODES = ['default', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'plan', 'bubble'] as const
