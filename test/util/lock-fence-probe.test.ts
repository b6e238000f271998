import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fencedFs } from '../../src/util/lock-fence.js'

/*
 * proper-lockfile's first acquisition in a process probes the filesystem's mtime precision: mkdir,
 * then utimes, then stat. A writer stopped (SIGSTOP) between the mkdir and the utimes for longer
 * than the stale time finds its lock taken over by another writer; that probe must read as a lock
 * held elsewhere (ELOCKED: tried again), and its cleanup must leave the new holder's directory.
 */

const call = <A extends unknown[]>(fn: (...args: [...A, (err: Error | null) => void]) => void, ...args: A) =>
  new Promise<Error | null>((resolve) => fn(...args, (err) => resolve(err)))

let root: string
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

function takeOver(dir: string): fs.BigIntStats {
  fs.rmdirSync(dir) // the other writer judged it stale and recovered it…
  fs.mkdirSync(dir) // …and made its own
  const t = (Date.now() + 0.37) / 1000
  fs.utimesSync(dir, t, t)
  return fs.statSync(dir, { bigint: true })
}

describe('fencedFs: the mtime-precision probe of a lock lost while stopped', () => {
  it('is refused as ELOCKED, touches nothing of the new holder, and its cleanup leaves the new directory', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fence-probe-'))
    const dir = path.join(root, 'inbox.json.lock')
    expect(await call(fencedFs.mkdir, dir)).toBeNull()
    const theirs = takeOver(dir)

    const probe = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5)
    const err = (await call(fencedFs.utimes, dir, probe, probe)) as NodeJS.ErrnoException | null
    expect(err?.code).toBe('ELOCKED')
    expect(fs.statSync(dir, { bigint: true }).mtimeNs).toBe(theirs.mtimeNs) // their token untouched

    expect(await call(fencedFs.rmdir, dir)).toBeNull() // proper-lockfile's cleanup after a failed probe
    const after = fs.statSync(dir, { bigint: true, throwIfNoEntry: false })
    expect(after?.ino).toBe(theirs.ino) // still there: not ours to remove
  })

  it('of a lock still ours succeeds, and the lock is released normally', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fence-probe-'))
    const dir = path.join(root, 'inbox.json.lock')
    expect(await call(fencedFs.mkdir, dir)).toBeNull()
    const probe = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5)
    expect(await call(fencedFs.utimes, dir, probe, probe)).toBeNull()
    expect(await call(fencedFs.stat, dir)).toBeNull()
    // a refresh later (stat, then utimes) of a lock taken over is reported as ENOENT (compromised), as before
    takeOver(dir)
    expect(await call(fencedFs.stat, dir)).toBeNull()
    const err = (await call(fencedFs.utimes, dir, new Date(), new Date())) as NodeJS.ErrnoException | null
    expect(err?.code).toBe('ENOENT')
    expect(await call(fencedFs.rmdir, dir)).toBeNull()
    expect(fs.existsSync(dir)).toBe(true) // the new holder's
  })

  it('a lock that was ours is removed at release', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fence-probe-'))
    const dir = path.join(root, 'inbox.json.lock')
    expect(await call(fencedFs.mkdir, dir)).toBeNull()
    expect(await call(fencedFs.stat, dir)).toBeNull() // the probe with the precision cached
    expect(await call(fencedFs.rmdir, dir)).toBeNull()
    expect(fs.existsSync(dir)).toBe(false)
  })
})
