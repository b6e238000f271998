import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createLeadDelegation } from '../../src/agent/subagents/lead-session.js'
import type { PermissionCheck } from '../../src/agent/tool.js'
import { LEAD_NAME } from '../../src/home/paths.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createPermissionLayer } from '../../src/permissions/requests/client.js'
import { listPending } from '../../src/asks/store.js'
import { makeFixture, startAgent, TEAM, type Fixture } from '../agent/runtime/helpers.js'
import { recordingClient } from '../agent/subagents/helpers.js'
import { track, useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'

/**
 * Issue 23 finding 2: the lead's subagents and forks ran Bash as plain `bash -c` while the
 * permission layer judged them by the lead's sandbox (auto-allowed under autoAllowBashIfSandboxed).
 * Now they run in their parent's sandbox: with bwrap the key is hidden; without it the call is asked.
 */

const PEM = 'BEGIN PRIVATE KEY'
let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

/** A command that names the key by glob, so no string check of the command sees the control plane. */
const catKey = () => `cat ${path.dirname(fx.home)}/${path.basename(fx.home).slice(0, 2)}*/te*s/${TEAM}/lead.k*`

async function settings(sandbox: Record<string, unknown>): Promise<void> {
  await fs.mkdir(path.join(fx.cwd, '.claude'), { recursive: true })
  await fs.writeFile(path.join(fx.cwd, '.claude', 'settings.json'), JSON.stringify({ sandbox: { autoAllowBashIfSandboxed: true, ...sandbox } }))
}

/** The lead with its real permission layer, its subagents' calls asked through it (as leader.ts wires it). */
async function startLeadWithLayer(mode: Mode = 'default'): Promise<void> {
  const { client } = recordingClient(loopback)
  let leadCheck: PermissionCheck = () => ({ behavior: 'deny', message: 'not ready' })
  const { delegation, tools } = await createLeadDelegation(
    { team: TEAM, parent: LEAD_NAME, cwd: fx.cwd, env: fx.env, client, checkPermission: (t, i, c) => leadCheck(t, i, c), deliver: () => {} },
    { spawnTeammate: async (i) => `spawned ${i.name}`, stopTeammate: async (n) => `no ${n}` },
  )
  track(
    'delegation',
    () => delegation.close(),
    () => '',
  )
  const agent = await startAgent(fx, LEAD_NAME, {
    client,
    extraTools: tools,
    runtime: { external: true, autoClaimTasks: false },
    mode,
    permissions: async (a) => {
      const layer = await createPermissionLayer(a, { notifyTmux: false })
      leadCheck = layer.check
      return layer
    },
  })
  agent.runtime.say('go')
}

function scenario(kind: 'subagent' | 'fork'): void {
  const bash = { type: 'tool_use' as const, id: 'toolu_cat', name: 'Bash', input: { command: catKey() } }
  const agentCall =
    kind === 'fork'
      ? { description: 'look', prompt: 'look around' }
      : { description: 'look', prompt: 'look around', subagent_type: 'general-purpose' }
  loopback.setScenario({
    agents: {
      [LEAD_NAME]: [
        { when: { lastUserIncludes: 'go' }, content: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: agentCall }] },
        { text: 'waiting' },
      ],
      [kind === 'fork' ? `${LEAD_NAME}/fork-1` : `${LEAD_NAME}/general-purpose-1`]: [{ content: [bash] }, { text: 'done' }],
    },
    fallback: { text: 'ok' },
  })
}

function bodies(): string {
  return loopback.requests.map((r) => JSON.stringify(r.body ?? {})).join('\n')
}

const MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const
type Mode = (typeof MODES)[number]

describe("a subagent's and a fork's Bash run in the lead's sandbox", () => {
  for (const kind of ['subagent', 'fork'] as const) {
    it(`${kind}, bwrap present, autoAllowBashIfSandboxed: the key is hidden from its cat`, async () => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings({})
      scenario(kind)
      await startLeadWithLayer()
      await waitFor('the Bash result', () => bodies().includes('"tool_use_id":"toolu_cat"'), 20_000)
      expect(bodies()).not.toContain(PEM)
    })

    it(`${kind}, bwrap absent (a bad sandbox.bwrapPath): the call is asked, not auto-allowed, and nothing is printed`, async () => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings({ bwrapPath: '/nonexistent/bwrap' })
      scenario(kind)
      await startLeadWithLayer()
      const asked = await waitFor(
        'the Bash question',
        async () => (await listPending(TEAM, { env: fx.env })).requests.find((r) => r.toolName === 'Bash'),
        20_000,
      )
      expect(JSON.stringify(asked)).toContain('lead.k*')
      expect(bodies()).not.toContain(PEM)
    })
  }
})

/** The matrix (issue 23): every mode, bwrap present and absent, a subagent and a fork — the key never reaches the model. */
describe.each(MODES)("a subagent's and a fork's Bash, %s", (mode) => {
  describe.each([
    ['bwrap present', {}],
    ['bwrap absent', { bwrapPath: '/nonexistent/bwrap' }],
  ] as const)('%s', (variant, sandbox) => {
    it.each(['subagent', 'fork'] as const)('%s: its cat of the key (by glob) is hidden, asked or refused — never printed', async (kind) => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings(sandbox)
      scenario(kind)
      await startLeadWithLayer(mode)
      await waitFor(
        'the Bash result, a question, or the Agent call refused',
        async () =>
          bodies().includes('"tool_use_id":"toolu_cat"') ||
          bodies().includes('"tool_use_id":"toolu_agent"') ||
          (await listPending(TEAM, { env: fx.env })).requests.length > 0,
        20_000,
      )
      expect(bodies()).not.toContain(PEM)
      if (variant === 'bwrap absent') expect(bodies()).not.toMatch(/toolu_cat[^}]*"is_error":false/)
    })
  })
})
