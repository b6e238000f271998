import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import type { NewMember } from '../../src/teams/team-store.js'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { type Fixture, type TestAgent, makeFixture } from '../runtime/helpers.js'

export interface AgentTeamOptions {
  /** The test file's list of started agents: stopped (their panes printed on a failure) after each test. */
  agents: TestAgent[]
  /** Receives the loopback server and each test's fresh fixture. */
  onReady(loopback: LoopbackServer, fx: Fixture): void
  /** Runs after the fixture is made (e.g. to reset scenario hooks). */
  beforeEach?(loopback: LoopbackServer, fx: Fixture): void | Promise<void>
}

/**
 * The agent-team fixture of the runtime tests: one loopback Messages API per file, a fresh team
 * (isolated SWARM_HOME, signed lead, the given members) per test, every started agent stopped and
 * the home removed after it.
 */
export function useAgentTeam(members: NewMember[], o: AgentTeamOptions): void {
  let loopback: LoopbackServer
  let fx: Fixture
  beforeAll(async () => {
    loopback = await startLoopbackServer({ scenario: {} })
  })
  afterAll(async () => {
    await loopback.close()
  })
  beforeEach(async () => {
    loopback.requests.length = 0
    loopback.onRequest = undefined
    fx = await makeFixture(loopback, members)
    o.onReady(loopback, fx)
    await o.beforeEach?.(loopback, fx)
  })
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') for (const a of o.agents) console.error(`--- pane ---\n${a.out()}`)
    await Promise.all(o.agents.map((a) => a.stop()))
    o.agents.length = 0
    await fx.cleanup()
  })
}
