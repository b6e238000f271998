import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { FileWatch } from '../../src/watch/file-watch.js'
import { useTempDir } from '../support/home.js'
import { waitFor } from '../support/wait.js'

/* One file watched by its inode (file-watch.ts): woken by that file only, across renames over it. */

describe('FileWatch', () => {
  let root: string
  useTempDir('swarm-file-watch-', (d) => (root = d))

  function watch(file: string): { changes: () => number; errors: unknown[]; ready: Promise<void> } {
    let changes = 0
    const errors: unknown[] = []
    const w = new FileWatch(
      file,
      () => changes++,
      (err) => errors.push(err),
    )
    onTestFinished(() => w.close())
    return { changes: () => changes, errors, ready: w.check() }
  }

  /** Temp file + rename, as every inbox commit writes. */
  function replace(file: string, text: string): void {
    const tmp = `${file}.${Math.random().toString(36).slice(2)}.tmp`
    fs.writeFileSync(tmp, text)
    fs.renameSync(tmp, file)
  }

  it('is woken by each of many renames over the file and by writes in place', async () => {
    const file = path.join(root, 'lead.json')
    fs.writeFileSync(file, '[]')
    const w = watch(file)
    await w.ready
    for (let i = 0; i < 20; i++) {
      const before = w.changes()
      replace(file, `[${i}]`)
      await waitFor(`the event of rename ${i}`, () => w.changes() > before, 5_000)
    }
    const before = w.changes()
    fs.appendFileSync(file, ' ')
    await waitFor('the event of a write in place', () => w.changes() > before, 5_000)
    expect(w.errors).toEqual([])
  })

  it('is not woken by other files of its directory (a lock directory, a sibling inbox, a temp file)', async () => {
    const file = path.join(root, 'm1.json')
    fs.writeFileSync(file, '[]')
    const w = watch(file)
    await w.ready
    await new Promise((r) => setTimeout(r, 50))
    const before = w.changes()
    for (let i = 0; i < 10; i++) {
      fs.mkdirSync(path.join(root, 'm2.json.lock'))
      replace(path.join(root, 'm2.json'), `[${i}]`)
      fs.rmdirSync(path.join(root, 'm2.json.lock'))
    }
    // The last of those is seen before a write of our own file is.
    replace(file, '[1]')
    await waitFor('the event of its own file', () => w.changes() > before, 5_000)
    expect(w.changes() - before).toBeLessThanOrEqual(2)
  })

  it('works before the directory and the file exist, then follows the file; and after it is removed and made again', async () => {
    const file = path.join(root, 'teams', 'alpha', 'inboxes', 'lead.json')
    const w = watch(file)
    await w.ready
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const before = w.changes()
    replace(file, '[]')
    await waitFor('the file created', () => w.changes() > before, 5_000)
    // From now on the file itself is watched: a sibling wakes nothing.
    await new Promise((r) => setTimeout(r, 50))
    const quiet = w.changes()
    for (let i = 0; i < 5; i++) replace(path.join(path.dirname(file), 'other.json'), '[]')
    await new Promise((r) => setTimeout(r, 100))
    expect(w.changes()).toBe(quiet)
    fs.rmSync(file)
    await waitFor('the removal seen', () => w.changes() > quiet, 5_000)
    const gone = w.changes()
    fs.writeFileSync(file, '[1]')
    await waitFor('the file made again', () => w.changes() > gone, 5_000)
    const again = w.changes()
    replace(file, '[2]')
    await waitFor('a rename over the new file', () => w.changes() > again, 5_000)
    expect(w.errors).toEqual([])
  })
})
