import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inboxPath } from '../../src/home/paths.js'
import { commit } from '../../src/mailbox/commit.js'
import { appendMessage, markRead, readInbox } from '../../src/mailbox/inbox.js'
import { releaseLock, tryLock } from '../../src/mailbox/inbox-lock.js'
import { holdsLock, LockLostError } from '../../src/util/lock-fence.js'
import { tempHome } from './helpers.js'

/*
 * The fencing token of an inbox lock, deterministically: what another writer does when it takes a
 * stale lock over (rmdir, mkdir — the filesystem may hand the same inode back — and an mtime set
 * to the same millisecond, as proper-lockfile's first lock of a process does) is done here with
 * real filesystem calls while this process holds the lock.
 */

let home: Awaited<ReturnType<typeof tempHome>>
let file: string
beforeEach(async () => {
  home = await tempHome()
  file = inboxPath('alpha', 'lead', home.env)
  await appendMessage(file, { from: 'alice', text: 'before' })
})
afterEach(async () => {
  await home.cleanup()
})

/** Another writer's takeover of the lock directory, keeping the inode number and mtime millisecond if it can. */
function takeOver(): void {
  const dir = `${file}.lock`
  const ms = Math.floor(fs.statSync(dir).mtimeMs)
  fs.rmdirSync(dir)
  fs.mkdirSync(dir)
  fs.utimesSync(dir, ms / 1000, ms / 1000)
}

describe('the inbox lock fence (lock-fence.ts)', () => {
  it('a holder whose lock directory was taken over writes nothing and leaves the new lock in place', async () => {
    const release = await tryLock(file)
    expect(release).toBeDefined()
    expect(holdsLock(`${file}.lock`)).toBe(true)
    takeOver()
    expect(holdsLock(`${file}.lock`)).toBe(false)
    const before = fs.readFileSync(file, 'utf8')
    await expect(
      commit(file, { change: (entries) => entries.push({ from: 'x', text: 'stale', timestamp: new Date().toISOString() }) }),
    ).rejects.toThrow(LockLostError)
    expect(fs.readFileSync(file, 'utf8')).toBe(before)
    const theirs = fs.statSync(`${file}.lock`, { bigint: true })
    await releaseLock(file, release!)
    // The release did not remove the new holder's lock.
    expect(fs.statSync(`${file}.lock`, { bigint: true }).birthtimeNs).toBe(theirs.birthtimeNs)
    fs.rmdirSync(`${file}.lock`) // the new holder releases
  })

  it('a mark that lost its lock half-way is run again from the start under a fresh lock', async () => {
    // The change runs under the lock; the first time, the lock is taken over before the write.
    let calls = 0
    const changed = await markRead(file, (m) => {
      if (calls++ === 0) {
        takeOver()
        setTimeout(() => fs.rmdirSync(`${file}.lock`), 50) // the new holder releases soon after
      }
      return m.text === 'before'
    })
    expect(calls).toBe(2)
    expect(changed).toBe(1)
    expect((await readInbox(file)).map((m) => m.read)).toEqual([true])
  })
})
