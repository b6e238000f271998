import { createLeadDelegation } from '../../src/agent/subagents/lead-session.js'
import type { PermissionCheck } from '../../src/agent/tool.js'
import { LEAD_NAME } from '../../src/home/paths.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createPermissionLayer } from '../../src/permissions/requests/client.js'
import { type Fixture, startAgent, TEAM, type TestAgent } from '../agent/runtime/helpers.js'
import { recordingClient } from '../agent/subagents/helpers.js'
import { track } from '../support/agent-team.js'
import type { ALL_MODES } from './sandbox-helpers.js'

/**
 * The lead in `mode` with its real permission layer and its Agent tool, its subagents' and forks'
 * calls judged through that layer (as leader.ts wires it); told 'go'.
 */
export async function startLeadWithLayer(loopback: LoopbackServer, fx: Fixture, mode: (typeof ALL_MODES)[number] = 'default'): Promise<TestAgent> {
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
  return agent
}
