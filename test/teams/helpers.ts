import { spawn, type ChildProcess } from 'node:child_process'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { requireBuilt } from '../support/repo.js'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BIN = path.join(REPO, 'bin/swarm.js')
const WORKER = path.join(REPO, 'test/teams/fixtures/worker.mjs')
export const FIXTURES = path.join(REPO, 'test/teams/fixtures')

/** Tests that start processes run the built dist; fail loudly instead of testing stale code silently. */
export const assertBuilt = () => requireBuilt('dist/tasks/task-store.js')

/**
 * A fresh SWARM_HOME; `env` is a full environment with it set (never the real ~/.claude), and no
 * model service: these tests never reach one (and a developer's own key must not change them).
 */
export type TempHome = Pick<IsolatedHome, 'home' | 'env' | 'cleanup'>
export const tempHome = async (): Promise<TempHome> => isolatedHome('swarm-teams-')

/** Every path under `dir`, relative, sorted. */
export async function listTree(dir: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (d: string) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      out.push(path.relative(dir, p))
      if (e.isDirectory()) await walk(p)
    }
  }
  await walk(dir)
  return out.sort()
}

export interface CliResult {
  exitCode: number
  stdout: string
  stderr: string
}

/** Runs `node bin/swarm.js …` with SWARM_HOME set. */
export async function swarm(home: TempHome, args: string[]): Promise<CliResult> {
  const r = await execa('node', [BIN, ...args], { env: home.env, reject: false, timeout: 20_000, cwd: REPO, stdin: 'ignore' })
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) }
}

/**
 * Starts `count` worker processes (test/teams/fixtures/worker.mjs), waits until each has loaded
 * its modules, then releases them at once so they really contend. Resolves with each worker's
 * parsed JSON result; every process is killed if anything goes wrong.
 */
export async function raceWorkers(home: TempHome, argsFor: (i: number) => string[], count: number): Promise<unknown[]> {
  const children: ChildProcess[] = []
  const outputs: string[] = []
  const errors: string[] = []
  try {
    const ready = Array.from({ length: count }, (_, i) => {
      const child = spawn(process.execPath, [WORKER, ...argsFor(i)], { env: home.env, stdio: ['pipe', 'pipe', 'pipe'] })
      children.push(child)
      outputs[i] = ''
      errors[i] = ''
      child.stderr!.on('data', (d) => (errors[i] += d))
      return new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
          outputs[i] += d
          if (outputs[i].includes('ready\n')) resolve()
        })
        child.on('exit', (code) => reject(new Error(`worker ${i} exited (${code}) before it was ready: ${errors[i]}`)))
      })
    })
    await Promise.all(ready)
    const done = children.map(
      (child, i) =>
        new Promise<unknown>((resolve, reject) => {
          // 'close', not 'exit': at 'exit' the last line of stdout may not have been read yet.
          child.on('close', (code) => {
            if (code !== 0) return reject(new Error(`worker ${i} exited with ${code}: ${errors[i]}`))
            const line = outputs[i].split('\n').filter(Boolean).pop()!
            try {
              resolve(JSON.parse(line))
            } catch {
              reject(new Error(`worker ${i} printed no result: ${JSON.stringify(outputs[i])}`))
            }
          })
        }),
    )
    for (const child of children) child.stdin!.end('go\n')
    return await Promise.all(done)
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

/** Starts a worker and resolves once it printed `ready` (for workers that hold a lock until killed). */
export async function startWorker(home: TempHome, args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WORKER, ...args], { env: home.env, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d
      if (out.includes('ready\n')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${err}`)))
  })
  return child
}
