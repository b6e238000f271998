import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll } from 'vitest'
import { type LoopbackServer, type LoopbackServerOptions, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { isAlive } from '../../src/process/liveness.js'
import { killTree, processTrees } from '../../src/process/tree.js'
import { reapContained } from '../../src/process/containment.js'
import { teamsDir } from '../../src/home/paths.js'
import { isolatedEnv } from '../support/home.js'
import { BIN } from '../support/repo.js'
import { reapAllTmux } from '../support/tmux.js'

export { BIN } from '../support/repo.js'

export interface Sandbox {
  root: string
  project: string
  env: NodeJS.ProcessEnv
  /** Runs `node bin/swarm.js …` and returns its exit code and output. */
  swarm(args: string[], opts?: { timeout?: number; env?: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }>
  /** Starts a long-running process that cleanup() reaps (its whole tree). */
  start(file: string, args: string[], opts?: { env?: NodeJS.ProcessEnv }): ChildProcess
  cleanup(): Promise<void>
}

/**
 * Everything a whole-team test needs and nothing real: SWARM_HOME and the project in a temp dir,
 * tmux on a private TMUX_TMPDIR with TMUX unset, no colour. cleanup() kills every tmux server
 * under it (by socket), every process started, and removes the directory.
 */
export function sandbox(extraEnv: NodeJS.ProcessEnv = {}): Sandbox {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-e2e-')))
  const project = path.join(root, 'project')
  fs.mkdirSync(project, { recursive: true })
  const env = isolatedEnv(root, extraEnv)
  const children: ChildProcess[] = []
  return {
    root,
    project,
    env,
    async swarm(args, opts = {}) {
      const r = await execa(process.execPath, [BIN, ...args], {
        env: opts.env ?? env,
        reject: false,
        timeout: opts.timeout ?? 30_000,
        cwd: project,
        stdin: 'ignore',
      })
      return { code: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) }
    },
    start(file, args, opts = {}) {
      const child = spawn(file, args, { env: opts.env ?? env, cwd: project, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
      children.push(child)
      return child
    },
    async cleanup() {
      await reapAllTmux(env)
      const pids = children.map((c) => c.pid).filter((p): p is number => p !== undefined && isAlive(p))
      const trees = [...(await processTrees(pids)).values()].flat()
      await Promise.all(trees.filter(isAlive).map((p) => killTree(p, { graceMs: 200 })))
      // The member cgroups of teams a test left undeleted (process/containment.ts): emptied and removed.
      const teams = teamsDir(env)
      for (const t of fs.existsSync(teams) ? fs.readdirSync(teams, { withFileTypes: true }) : []) {
        if (t.isDirectory()) await reapContained(path.join(teams, t.name), env, { timeoutMs: 2_000 })
      }
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
    },
  }
}

/** A sandbox whose model is a loopback Messages API playing a scenario; `close` reaps both. */
export interface ModelSandbox {
  sb: Sandbox
  server: LoopbackServer
  close(): Promise<void>
}

export async function modelSandbox(scenario: LoopbackServerOptions['scenario']): Promise<ModelSandbox> {
  const server = await startLoopbackServer({ scenario })
  const sb = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url })
  return {
    sb,
    server,
    close: async () => {
      await sb.cleanup()
      await server.close()
    },
  }
}

/** For a describe block: one `modelSandbox(scenario)`, handed to `onReady` before its first test and reaped after its last. */
export function useModelSandbox(scenario: LoopbackServerOptions['scenario'], onReady: (t: ModelSandbox) => unknown): void {
  let t: ModelSandbox | undefined
  beforeAll(async () => {
    t = await modelSandbox(scenario)
    onReady(t)
  })
  afterAll(async () => {
    await t?.close()
  })
}

const tool = (name: string, input: Record<string, unknown>) => ({ content: [{ type: 'tool_use' as const, name, input }] })

/**
 * What alice plays in the whole-team flows: run a command (which asks permission), report "done 1";
 * later, on "second message", report "done 2". Everyone else (the lead agent) just says "Noted.".
 */
export const ALICE_SCENARIO = {
  agents: {
    alice: [
      { ...tool('Bash', { command: 'echo ran >> count.txt' }), when: { lastUserIncludes: 'run the tests' } },
      tool('SendMessage', { to: 'team-lead', message: 'done 1: the command ran', summary: 'done 1' }),
      { text: 'ok' },
      {
        ...tool('SendMessage', { to: 'team-lead', message: 'done 2: got your second message', summary: 'done 2' }),
        when: { lastUserIncludes: 'second message' },
      },
      { text: 'ok again' },
    ],
  },
  fallback: { text: 'Noted.' },
}
