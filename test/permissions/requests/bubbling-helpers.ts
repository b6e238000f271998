import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type TestContext, afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import type { AgentOutput } from '../../../src/agent/render.js'
import { createOutput } from '../../../src/agent/render.js'
import { assembleAgent } from '../../../src/agent/start.js'
import { startLoopbackServer, type LoopbackServer, type RecordedRequest } from '../../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../../src/loopback-model/scenario.js'
import { createPermissionLayer, type PermissionLayerOptions } from '../../../src/permissions/requests/client.js'
import { ensureTeamKeys } from '../../../src/mailbox/signing.js'
import { listPending, type ListedRequest } from '../../../src/permissions/requests/store.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { createTeam } from '../../../src/teams/team-store.js'
import { isolatedHome } from '../../support/home.js'
import { waitFor } from '../../support/wait.js'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
export const BIN = path.join(REPO, 'bin/swarm.js')
export const TEAM = 'crew'

/** A temp SWARM_HOME with team `crew` (team-lead + alice, cwd a temp project dir) and its lead key. */
export interface Fixture {
  home: string
  cwd: string
  env: NodeJS.ProcessEnv
  cleanup(): Promise<void>
}

export async function makeFixture(loopback: LoopbackServer): Promise<Fixture> {
  const { home, project: cwd, env, cleanup } = isolatedHome('swarm-bubbling-', { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: loopback.url })
  await createTeam({ name: TEAM, cwd, members: [{ name: 'alice', cwd }] }, env)
  await ensureTeamKeys(TEAM, env)
  return { home, cwd, env, cleanup }
}

/**
 * The bubbling tests' per-file setup: one loopback Messages API for the file, a fresh team (alice)
 * per test handed to `onReady`; after each test the file's own `afterEach` (stop what it started),
 * then the team's home is removed.
 */
export function useBubblingTeam(o: {
  onReady(loopback: LoopbackServer, fx: Fixture): void | Promise<void>
  afterEach?(ctx: TestContext): void | Promise<void>
}): void {
  let loopback: LoopbackServer
  let fx: Fixture
  beforeAll(async () => {
    loopback = await startLoopback()
  })
  afterAll(async () => {
    await loopback.close()
  })
  beforeEach(async () => {
    loopback.requests.length = 0
    fx = await makeFixture(loopback)
    await o.onReady(loopback, fx)
  })
  afterEach(async (ctx) => {
    await o.afterEach?.(ctx)
    await fx.cleanup()
  })
}

export async function startLoopback(): Promise<LoopbackServer> {
  return startLoopbackServer({ scenario: {} })
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
  return {
    done,
    pane: pane.text,
    stop: () => {
      abort.abort()
      return done
    },
  }
}

/** A `swarm agent` child process (the real teammate binary), output kept for failure reports. */
export interface ChildAgent {
  child: ChildProcess
  output(): string
  /** The exit code, or the signal that killed it. */
  exited: Promise<number | NodeJS.Signals | null>
  kill(signal?: NodeJS.Signals): Promise<void>
}

export function startChild(fx: Fixture, args: string[] = []): ChildAgent {
  const child = spawn(process.execPath, [BIN, 'agent', '--team', TEAM, '--name', 'alice', '--mode', 'default', ...args], {
    env: fx.env,
    cwd: fx.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))
  return {
    child,
    output: () => out,
    exited,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
  }
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
