import { spawn, type ChildProcess } from 'node:child_process'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { removeOrphanedPrivateTmps } from '../../src/sandbox/view.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createTeam, type NewMember } from '../../src/teams/team-store.js'
import { isolatedHome } from './home.js'
import { BIN } from './repo.js'

/**
 * The agent-team fixture of the tests that run teammates on the loopback model: one loopback
 * Messages API per file, a fresh team per test, and after each test everything the test started
 * (`track`) stopped, its output printed on a failure, and the team's home removed.
 */

/** A temp SWARM_HOME holding one team (team-lead + members, cwd the project) with its lead key. */
export interface Fixture {
  base: string
  home: string
  cwd: string
  env: NodeJS.ProcessEnv
  cleanup(): Promise<void>
}

/** Team `team` in a fresh isolated home whose model is `loopback`. */
export async function makeTeam(team: string, loopback: LoopbackServer, members: NewMember[], prefix = 'swarm-team-'): Promise<Fixture> {
  const { base, home, project: cwd, env, cleanup } = isolatedHome(prefix, { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: loopback.url })
  await createTeam({ name: team, cwd, members: members.map((m) => ({ cwd, ...m })) }, env)
  await ensureTeamKeys(team, env)
  return { base, home, cwd, env, cleanup }
}

interface Running {
  what: string
  stop(): Promise<unknown>
  output(): string
}

/** What this test file started and has not stopped yet, and what to remove after that (a module per test file). */
const running = new Set<Running>()
const cleanups: Array<() => Promise<void>> = []

/**
 * Registers something a test started (an agent, a child process, an executor) to be stopped after
 * the test by `useLoopback`; `output` is printed, under `what`, when the test failed. Stopping
 * twice must be harmless.
 */
export function track(what: string, stop: () => Promise<unknown>, output: () => string): void {
  running.add({ what, stop, output })
}

/** Registers a cleanup (a temp home) for after the test, once every tracked thing is stopped; the last registered runs first. */
export function afterTest(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup)
}

/**
 * Per file: a loopback Messages API server (`scenario: {}`) handed to `onReady`. Per test: its
 * records and hook reset before; after, every tracked thing stopped (all at once), then the
 * registered cleanups run.
 */
export function useLoopback(onReady: (loopback: LoopbackServer) => unknown): void {
  let loopback: LoopbackServer
  beforeAll(async () => {
    loopback = await startLoopbackServer({ scenario: {} })
    onReady(loopback)
  })
  afterAll(async () => {
    await loopback.close()
  })
  beforeEach(() => {
    loopback.requests.length = 0
    loopback.onRequest = undefined
  })
  afterEach(async (ctx) => {
    const started = [...running]
    running.clear()
    if (ctx.task.result?.state === 'fail') for (const r of started) console.error(`--- ${r.what} ---\n${r.output()}`)
    try {
      await Promise.all(started.map((r) => r.stop()))
      // A teammate stopped with SIGKILL cannot remove its sandbox's private TMPDIR; the next sandbox
      // made would (sandbox/view.ts) — at the end of a test nobody makes one, so sweep as it does.
      await removeOrphanedPrivateTmps()
    } finally {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    }
  })
}

/** What `onReady` gets before each test. */
export interface AgentTeam {
  loopback: LoopbackServer
  fx: Fixture
}

/**
 * `useLoopback`, and per test the fixture `team` makes (removed after the test), handed to `onReady`.
 */
export function useAgentTeam(o: { team(loopback: LoopbackServer): Promise<Fixture>; onReady(t: AgentTeam): unknown }): void {
  let loopback: LoopbackServer
  useLoopback((l) => (loopback = l))
  beforeEach(async () => {
    const fx = await o.team(loopback)
    afterTest(fx.cleanup)
    await o.onReady({ loopback, fx })
  })
}

/** A `swarm agent` child process (the real teammate binary), its output kept for failure reports. */
export interface ChildAgent {
  child: ChildProcess
  output(): string
  /** The exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>
  /** Sends `signal` (default SIGKILL) unless it has exited; resolves with `exited`. */
  kill(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>
}

/** `swarm agent --team <team> --name <name> <args>` in the fixture's project, killed after the test. */
export function startSwarmAgent(fx: Fixture, team: string, name: string, args: string[] = []): ChildAgent {
  const child = spawn(process.execPath, [BIN, 'agent', '--team', team, '--name', name, ...args], {
    env: fx.env,
    cwd: fx.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  track(`swarm agent ${name}`, kill, () => out)
  return { child, output: () => out, exited, kill }
}
