import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateKeyPairSync } from 'node:crypto'
import { createExecutor } from '../../src/backends/registry.js'
import { leadSigner } from '../../src/trust/sign.js'
import { isolatedEnv as isolatedBase } from '../support/home.js'
import { reapTmux } from '../support/tmux.js'
import type { BackendType, InProcessExecutor, PaneExecutor, SpawnedTeammate } from '../../src/backends/types.js'
import { isAlive, waitForExit } from '../../src/process/liveness.js'
import { killTree } from '../../src/process/tree.js'

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures')
export const TEAMMATE = path.join(FIXTURES, 'teammate.mjs')
export const FAKE_IT2_DIR = path.join(FIXTURES, 'fake-it2')

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

/** test/support/home.ts's environment, with CI unset too (backend detection reads it). */
export function isolatedEnv(root: string): NodeJS.ProcessEnv {
  const env = isolatedBase(root)
  delete env.CI
  return env
}

/** One backend under test, driven the same way whatever it is. */
export interface Harness {
  type: BackendType
  env: NodeJS.ProcessEnv
  executor: PaneExecutor | InProcessExecutor
  /** Starts the fixture teammate `node teammate.mjs <args>` as `name` in `team`. */
  start(team: string, name: string, args: string[], opts?: { cwd?: string; env?: Record<string, string> }): Promise<SpawnedTeammate>
  /** Pids a test learned about; killed at cleanup if still alive. */
  track(...pids: number[]): void
  cleanup(): Promise<void>
}

export function makeHarness(type: BackendType): Harness {
  const root = tempDir(`swarm-${type}-`)
  const env = isolatedEnv(root)
  if (type === 'iterm2') {
    env.PATH = `${FAKE_IT2_DIR}:${env.PATH}`
    env.FAKE_IT2_DIR = path.join(root, 'it2')
    env.ITERM_SESSION_ID = 'w0t0p0:LEADER-0000'
  }
  const tracked = new Set<number>()
  // team-lead's entries (sendMessage, terminate's shutdown_request) are written only sealed.
  const options = { env, leaderArgv: () => ['sleep', '600'], sign: leadSigner(generateKeyPairSync('ed25519').privateKey) }
  const executor: PaneExecutor | InProcessExecutor = type === 'in-process' ? createExecutor('in-process', options) : createExecutor(type, options)
  const cwd = path.join(root, 'work')
  fs.mkdirSync(cwd, { recursive: true })
  return {
    type,
    env,
    executor,
    async start(team, name, args, opts = {}) {
      const base = { team, name, cwd: opts.cwd ?? cwd, env: opts.env, color: 'blue' }
      const spawned =
        executor.kind === 'in-process'
          ? await executor.spawn({
              ...base,
              run: async (ctx) => {
                const child = ctx.launch(process.execPath, [TEAMMATE, ...args])
                return (await child.exited).code ?? 1
              },
            })
          : await executor.spawn({ ...base, argv: [process.execPath, TEAMMATE, ...args] })
      if (spawned.pid && type !== 'in-process') tracked.add(spawned.pid)
      return spawned
    },
    track(...pids) {
      for (const p of pids) tracked.add(p)
    },
    async cleanup() {
      if (executor.kind === 'in-process') await executor.killAll()
      if (type === 'tmux') await reapTmux(env)
      const left = [...tracked].filter(isAlive)
      await Promise.all(left.map((pid) => killTree(pid, { graceMs: 0 })))
      await waitForExit(left, 2_000)
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
    },
  }
}

export function readJson<T = any>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T
  } catch {
    return undefined
  }
}
