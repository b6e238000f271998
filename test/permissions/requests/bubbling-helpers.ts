import fs from 'node:fs/promises'
import type { AgentOutput } from '../../../src/agent/render.js'
import { createOutput } from '../../../src/agent/render.js'
import { assembleAgent } from '../../../src/agent/start.js'
import type { LoopbackServer, RecordedRequest } from '../../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../../src/loopback-model/scenario.js'
import { createPermissionLayer, type PermissionLayerOptions } from '../../../src/permissions/requests/client.js'
import { listPending, type ListedRequest } from '../../../src/asks/store.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { makeTeam, startSwarmAgent, track, type ChildAgent, type Fixture } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

export { BIN } from '../../support/repo.js'
export type { ChildAgent, Fixture } from '../../support/agent-team.js'
export const TEAM = 'crew'

/** Team `crew` (team-lead + alice, cwd a temp project dir) in a fresh isolated home, on `loopback`. */
export function makeFixture(loopback: LoopbackServer): Promise<Fixture> {
  return makeTeam(TEAM, loopback, [{ name: 'alice' }], 'swarm-bubbling-')
}

/** alice: one tool call, then a sentence that says whether the tool result was an error. */
export function oneCall(name: string, input: Record<string, unknown>, id = 'toolu_1'): ScenarioInput {
  return {
    agents: {
      alice: [
        { content: [{ type: 'tool_use', id, name, input }] },
        { oneOf: [{ when: { toolResultIsError: true }, text: 'It was refused.' }, { text: 'It ran.' }] },
      ],
    },
  }
}

/** Captures an agent's pane output as lines. */
export function captureOutput(): { output: AgentOutput; text(): string } {
  let buf = ''
  const output = createOutput({
    stream: {
      write: (s: string) => {
        buf += s
        return true
      },
    } as unknown as NodeJS.WritableStream,
    color: false,
  })
  return { output, text: () => buf }
}

/** A teammate running inside the test process, with the real permission layer. */
export interface InProcessAgent {
  done: Promise<number>
  pane(): string
  stop(): Promise<number>
  /** The agent's runtime (compact it, inspect it). */
  runtime: Awaited<ReturnType<typeof assembleAgent>>['runtime']
}

export async function startInProcess(fx: Fixture, options: { mode?: string; layer?: PermissionLayerOptions } = {}): Promise<InProcessAgent> {
  const abort = new AbortController()
  const pane = captureOutput()
  const { runtime } = await assembleAgent({
    team: TEAM,
    name: 'alice',
    env: fx.env,
    mode: options.mode ?? 'default',
    output: pane.output,
    signal: abort.signal,
    runtime: { autoClaimTasks: false },
    permissions: (a) => createPermissionLayer(a, { notifyTmux: false, ...options.layer }),
  })
  const done = runtime.run()
  const stop = () => {
    abort.abort()
    return done
  }
  track("alice's pane", stop, pane.text)
  return { done, pane: pane.text, stop, runtime }
}

/** `swarm agent` for alice in the default mode, as a child process (the real teammate binary), killed after the test. */
export function startChild(fx: Fixture, args: string[] = []): ChildAgent {
  return startSwarmAgent(fx, TEAM, 'alice', ['--mode', 'default', ...args])
}

/** team-lead asks alice to start a turn. */
export async function nudge(fx: Fixture, text = 'please do it'): Promise<void> {
  await sendTeamMessage({ team: TEAM, to: 'alice', text, env: fx.env })
}

export async function waitForPending(fx: Fixture, output?: () => string): Promise<ListedRequest> {
  return waitFor('a pending request', async () => (await listPending(TEAM, { env: fx.env })).requests[0], 10_000, { output })
}

/** The model requests that carried a tool_result, as JSON text. */
export function toolResultRequests(loopback: LoopbackServer): string[] {
  return loopback.requests.filter((r) => JSON.stringify(r.body ?? {}).includes('"tool_result"')).map((r: RecordedRequest) => JSON.stringify(r.body))
}

export async function countLines(file: string): Promise<number> {
  try {
    return (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length
  } catch {
    return 0
  }
}

/** The tool_result the model was sent for `toolUseId` (from the loopback server's records). */
export function toolResult(loopback: LoopbackServer, toolUseId: string): { content: string; isError: boolean } | undefined {
  for (const r of loopback.requests) {
    const messages = (r.body as { messages?: Array<{ content: unknown }> } | undefined)?.messages ?? []
    for (const m of messages) {
      if (!Array.isArray(m.content)) continue
      for (const b of m.content as Array<Record<string, unknown>>) {
        if (b.type === 'tool_result' && b.tool_use_id === toolUseId) {
          const content = typeof b.content === 'string' ? b.content : JSON.stringify(b.content)
          return { content, isError: b.is_error === true }
        }
      }
    }
  }
  return undefined
}
