import { spawn, type ChildProcess } from 'node:child_process'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach } from 'vitest'
import { inboxPath } from '../../src/home/paths.js'
import { appendMessage } from '../../src/mailbox/inbox.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { requireBuilt } from '../support/repo.js'

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, '../..')
export const WRITER = path.join(here, 'fixtures', 'writer.mjs')
export const SWARM_BIN = path.join(repoRoot, 'bin', 'swarm.js')

/** Fails fast when the build the helper processes import is missing. */
export const requireBuild = () => requireBuilt('dist/mailbox/inbox.js')

/** An isolated SWARM_HOME (test/support/home.ts) for the mailbox tests. */
export type TempHome = Pick<IsolatedHome, 'home' | 'env' | 'cleanup'>
export const tempHome = async (): Promise<TempHome> => isolatedHome('swarm-mailbox-')

/**
 * The mailbox tests' per-test setup: a fresh home and the path of `agent`'s inbox in team `alpha`,
 * handed to `onReady` (which may also prepare files); after the test every process it started
 * (startNode) is killed and the home removed.
 */
export function useInbox(agent: string, onReady: (t: { home: TempHome; file: string }) => unknown): void {
  let home: TempHome
  beforeEach(async () => {
    home = await tempHome()
    await onReady({ home, file: inboxPath('alpha', agent, home.env) })
  })
  afterEach(async () => {
    await reapAll()
    await home.cleanup()
  })
}

export interface Proc {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
  /** Resolves when stdout has printed `line`. */
  waitForLine: (line: string, timeoutMs?: number) => Promise<void>
}

const live = new Set<Proc>()

/** Starts a node process; it is killed by reapAll() if still running. */
export function startNode(args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const proc: Proc = {
    child,
    output: () => out,
    exited,
    waitForLine: (line, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for "${line}"; output:\n${out}`)), timeoutMs)
        const check = () => {
          if (out.split('\n').some((l) => l.includes(line))) {
            clearTimeout(timer)
            child.stdout!.off('data', check)
            resolve()
          }
        }
        child.stdout!.on('data', check)
        void exited.then(() => {
          clearTimeout(timer)
          if (out.includes(line)) resolve()
          else reject(new Error(`process exited before "${line}"; output:\n${out}`))
        })
        check()
      }),
  }
  live.add(proc)
  void exited.then(() => live.delete(proc))
  return proc
}

/** Runs to completion and fails with the process's output when it exits non-zero. */
export async function runNode(args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const proc = startNode(args, env)
  const code = await proc.exited
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}:\n${proc.output()}`)
  return proc.output()
}

/** Kills every process a test started and waits for them (call in afterEach). */
export async function reapAll(): Promise<void> {
  const procs = [...live]
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
}

/** Names of the spool files (slots, one-shot files) that hold entries; a writer's idle slot is empty. */
export async function pendingSpool(spool: string): Promise<string[]> {
  const names = await fsp.readdir(spool).catch(() => [] as string[])
  const pending: string[] = []
  for (const name of names.filter((n) => n.endsWith('.slot') || n.endsWith('.json')).sort()) {
    const stat = await fsp.stat(path.join(spool, name)).catch(() => undefined)
    if (stat && stat.size > 0) pending.push(name)
  }
  return pending
}

/**
 * An append made while a foreign holder (Claude Code) has the lock: it goes through this process's
 * spool slot (making the spool and its bell) and waits; then the lock is released and the append
 * merges its slot. An append to a free inbox writes it at once, without a slot.
 */
export async function appendContended(file: string, text: string): Promise<void> {
  await fsp.mkdir(`${file}.lock`, { recursive: true })
  let pending: Promise<unknown> | undefined
  try {
    pending = appendMessage(file, { from: 'alice', text })
    const deadline = Date.now() + 10_000
    while ((await pendingSpool(`${file}.spool`)).length === 0) {
      if (Date.now() > deadline) throw new Error(`the append to ${file} never spooled`)
      await new Promise((r) => setTimeout(r, 5))
    }
  } finally {
    await fsp.rmdir(`${file}.lock`)
  }
  await pending
}
