import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { atomicWriteJson } from '../../src/util/fs.js'
import { LOCK_STALE_MS, withFileLock } from '../../src/util/lock.js'
import { isolatedHome } from '../support/home.js'

/*
 * The config.json and task-file lock (util/lock.ts) is fenced like the inboxes' (util/lock-fence.ts):
 * a holder stopped past the stale time (Ctrl-Z, a VM pause) while another writer took its lock over
 * must not rename its stale copy over what that writer committed. Real process, real SIGSTOP.
 */

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'stalled-writer.mjs')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function startWriter(file: string, name: string) {
  const child = spawn(process.execPath, [WRITER, file, name], { stdio: ['pipe', 'pipe', 'pipe'] })
  cleanups.push(() => {
    child.kill('SIGCONT')
    child.kill('SIGKILL')
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  const printed = async (text: string) => {
    for (let i = 0; i < 300 && !out.includes(text); i++) await sleep(50)
    if (!out.includes(text)) throw new Error(`the writer never printed ${JSON.stringify(text)}; output:\n${out}`)
  }
  return { child, exited, printed, output: () => out }
}

describe('withFileLock fencing (real process, real SIGSTOP)', () => {
  it('a holder stopped past the stale time commits nothing stale: it runs again and both writes are kept', async () => {
    const home = isolatedHome('swarm-lock-')
    cleanups.push(home.cleanup)
    const file = path.join(home.home, 'list.json')
    await fs.writeFile(file, '[]\n')

    const a = startWriter(file, 'a')
    await a.printed('read 0') // a holds the lock, its copy read
    a.child.kill('SIGSTOP')
    await sleep(LOCK_STALE_MS + 1_000)
    // Another writer takes the lock over as stale and commits.
    await withFileLock(file, async () => {
      const list = JSON.parse(await fs.readFile(file, 'utf8')) as string[]
      await atomicWriteJson(file, [...list, 'b'])
    })
    a.child.kill('SIGCONT')
    a.child.stdin.write('go\n')
    expect(await a.exited, a.output()).toBe(0)

    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual(['b', 'a'])
    expect(a.output()).toContain('read 1') // its second attempt read b's write
    expect(a.output()).toContain('done after 2 attempt(s)')
  }, 30_000)

  it('an unstalled holder writes once', async () => {
    const home = isolatedHome('swarm-lock-')
    cleanups.push(home.cleanup)
    const file = path.join(home.home, 'list.json')
    await fs.writeFile(file, '["x"]\n')
    const a = startWriter(file, 'a')
    await a.printed('read 1')
    a.child.stdin.write('go\n')
    expect(await a.exited, a.output()).toBe(0)
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual(['x', 'a'])
    expect(a.output()).toContain('done after 1 attempt(s)')
  })
})

describe('withFileLock makeDir', () => {
  it('makes the directory by default; with makeDir: false a missing directory is ENOENT and stays missing', async () => {
    const home = isolatedHome('swarm-lock-')
    cleanups.push(home.cleanup)
    const made = path.join(home.home, 'made', 'list.json')
    expect(await withFileLock(made, async () => 'ran')).toBe('ran')
    expect((await fs.stat(path.dirname(made))).isDirectory()).toBe(true)
    const gone = path.join(home.home, 'gone', 'layout')
    let ran = false
    const err = await withFileLock(gone, async () => (ran = true), { makeDir: false }).catch((e: NodeJS.ErrnoException) => e)
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT')
    expect(ran).toBe(false)
    await expect(fs.stat(path.dirname(gone))).rejects.toThrow(/ENOENT/)
    // An existing directory is locked as usual, and the lock directory is gone afterwards.
    await fs.mkdir(path.dirname(gone))
    expect(await withFileLock(gone, async () => 'locked', { makeDir: false })).toBe('locked')
    expect(await fs.readdir(path.dirname(gone))).toEqual([])
  })
})
