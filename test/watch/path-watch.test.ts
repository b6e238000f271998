import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { DirWatch } from '../../src/watch/dir-watch.js'
import { watchPath, type WatchEvent } from '../../src/watch/path-watch.js'
import { useTempDir } from '../support/home.js'
import { waitFor } from '../support/wait.js'

/* The one fs.watch of swarm (path-watch.ts) and the file-through-its-directory watch built on it. */

describe('watchPath', () => {
  let root: string
  useTempDir('swarm-path-watch-', (d) => (root = d))

  it('reports each entry written into a watched directory by name, and nothing once closed', async () => {
    const seen: Array<[string | null, WatchEvent]> = []
    const watch = watchPath(root, (name, event) => seen.push([name, event]))
    onTestFinished(() => watch.close())
    expect(watch.armed).toBe(true)
    fs.writeFileSync(path.join(root, 'a.json'), '{}')
    fs.renameSync(path.join(root, 'a.json'), path.join(root, 'b.json'))
    await waitFor('events for a.json and b.json', () => seen.some(([n]) => n === 'a.json') && seen.some(([n]) => n === 'b.json'))
    expect(seen.some(([, e]) => e === 'rename')).toBe(true)
    watch.close()
    expect(watch.armed).toBe(false)
    const before = seen.length
    fs.writeFileSync(path.join(root, 'c.json'), '{}')
    await new Promise((r) => setTimeout(r, 100))
    expect(seen.length).toBe(before)
  })

  it('comes back unarmed with the error for a path that cannot be watched, and its safety poll still runs', async () => {
    let polls = 0
    const watch = watchPath(
      path.join(root, 'missing'),
      (name, event) => {
        expect([name, event]).toEqual([null, 'poll'])
        polls++
      },
      { pollMs: 20 },
    )
    onTestFinished(() => watch.close())
    expect(watch.armed).toBe(false)
    expect((watch.error as NodeJS.ErrnoException).code).toBe('ENOENT')
    await waitFor('three polls', () => polls >= 3)
    watch.close()
    const after = polls
    await new Promise((r) => setTimeout(r, 80))
    expect(polls).toBe(after)
  })

  it('reports a watch that breaks (its directory removed) to onError at most, closes it, and keeps polling', async () => {
    const dir = path.join(root, 'gone')
    fs.mkdirSync(dir)
    let polls = 0
    const errors: unknown[] = []
    const watch = watchPath(dir, (_name, event) => void (event === 'poll' && polls++), { pollMs: 20, onError: (err) => errors.push(err) })
    onTestFinished(() => watch.close())
    expect(watch.armed).toBe(true)
    fs.rmSync(dir, { recursive: true })
    // Linux reports the removal as a last 'rename' (and no error); wherever an error comes, it is reported, never thrown.
    await waitFor('polls after the removal', () => polls >= 3)
    expect(errors.length).toBeLessThanOrEqual(1)
    if (errors.length) expect(watch.armed).toBe(false)
  })
})

describe('DirWatch', () => {
  let root: string
  useTempDir('swarm-dir-watch-', (d) => (root = d))

  it('sees a file written by rename in a directory that did not exist when the watch started', async () => {
    const file = path.join(root, 'teams', 't', 'inboxes', 'bob.json')
    let changes = 0
    const errors: unknown[] = []
    const watch = new DirWatch(
      file,
      () => changes++,
      (err) => errors.push(err),
    )
    onTestFinished(() => watch.close())
    await watch.check()
    const armedAt = changes
    fs.mkdirSync(path.dirname(file), { recursive: true })
    await waitFor('the watch moved down to the inboxes directory', async () => {
      await watch.check()
      return changes > armedAt
    })
    const before = changes
    fs.writeFileSync(`${file}.tmp`, '[]')
    fs.renameSync(`${file}.tmp`, file)
    await waitFor('an event for bob.json', () => changes > before)
    const unrelated = changes
    fs.writeFileSync(path.join(path.dirname(file), 'alice.json'), '[]')
    await new Promise((r) => setTimeout(r, 100))
    expect(changes).toBe(unrelated) // another file of the directory is not news for this one
    expect(errors).toEqual([])
  })
})
