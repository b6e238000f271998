import Anthropic from '@anthropic-ai/sdk'
import { LEAD_NAME } from '../../../src/home/paths.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { coordinatorPrompt, workerScratchpadNote } from '../../../src/agent/subagents/coordinator-prompt.js'
import type { Delegation } from '../../../src/agent/subagents/delegation.js'
import { allowInScratchpad, ensureScratchpad } from '../../../src/agent/subagents/scratchpad.js'
import { createLeadDelegation } from '../../../src/agent/subagents/lead-session.js'
import { allowAll } from '../../../src/agent/tool.js'
import { createBatchTool } from '../../../src/batch/batch-tool.js'
import { TEAM, messageText, modelRequests, requestMessages, startAgent, type Fixture, type TestAgent } from '../runtime/helpers.js'
import { track } from '../../support/agent-team.js'

/** The tools a coordinator lead is given (sorted): delegation and coordination only. */
export const COORDINATOR_TOOLS = ['Agent', 'Batch', 'SendMessage', 'TaskCreate', 'TaskGet', 'TaskList', 'TaskStop', 'TaskUpdate']

/** Raw request bodies as the SDK sent them, by agent header (recorded by the client's fetch). */
export interface RawBodies {
  all: Array<{ agent: string; body: string }>
  of(agent: string): string[]
}

/** A client of the loopback that keeps every request body exactly as it went on the wire. */
export function recordingClient(loopback: LoopbackServer): { client: Anthropic; raw: RawBodies } {
  const all: RawBodies['all'] = []
  const client = new Anthropic({
    apiKey: 'test',
    baseURL: loopback.url,
    maxRetries: 0,
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers)
      if (typeof init?.body === 'string') all.push({ agent: headers.get('x-swarm-agent') ?? '', body: init.body })
      return fetch(url, init)
    }) as typeof fetch,
  })
  return { client, raw: { all, of: (agent) => all.filter((r) => r.agent === agent).map((r) => r.body) } }
}

export interface Lead {
  agent: TestAgent
  delegation: Delegation
  stop(): Promise<void>
}

/**
 * The lead as the leader runs it: assembled from the team, with the session's delegation (the
 * lead's Agent and TaskStop) and its notifications handed to the lead's next turn; stopped after
 * the test (test/support/agent-team.ts).
 */
export async function startLead(fx: Fixture, client: Anthropic, o: { coordinator?: boolean } = {}): Promise<Lead> {
  let agent: TestAgent | undefined
  const scratchpad = o.coordinator ? await ensureScratchpad(TEAM, fx.env) : undefined
  const { delegation, tools } = await createLeadDelegation(
    {
      team: TEAM,
      parent: LEAD_NAME,
      cwd: fx.cwd,
      env: fx.env,
      client,
      checkPermission: scratchpad ? allowInScratchpad(allowAll, scratchpad) : allowAll,
      ...(scratchpad ? { coordinator: true, workerNote: workerScratchpadNote(scratchpad) } : {}),
      deliver: (text) => agent?.runtime.notify(text),
      batchTool: createBatchTool({ client, env: fx.env, parent: LEAD_NAME }),
    },
    { spawnTeammate: async (i) => `spawned ${i.name}`, stopTeammate: async (name) => `no teammate ${name} to stop` },
  )
  agent = await startAgent(fx, LEAD_NAME, {
    client,
    extraTools: tools,
    runtime: { external: true, autoClaimTasks: false },
    ...(scratchpad ? { onlyKinds: ['coordination'] as const, definitionPrompt: coordinatorPrompt({ scratchpad }) } : {}),
  })
  const stop = async () => {
    await agent!.stop()
    await delegation.close()
  }
  track('lead', stop, agent.out)
  return { agent, delegation, stop }
}

/** The text of the last user message of each of the lead's requests. */
export function leadTurnInputs(loopback: LoopbackServer): string[] {
  return modelRequests(loopback, LEAD_NAME).map((r) => messageText(requestMessages(r).at(-1)))
}

/** The task id the Agent tool returned (from "task id a…"). */
export function taskIdIn(text: string): string | undefined {
  return /task id (a[0-9a-f]{16})/.exec(text)?.[1]
}
