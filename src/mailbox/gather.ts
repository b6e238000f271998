import fs from 'node:fs'
import path from 'node:path'
import { type PathWatch, watchPath } from '../watch/path-watch.js'
import { ownerAlive, SLOT_SUFFIX, spoolDir } from './spool.js'

/**
 * What a merging writer (outbox.ts) watches between two merges: the slots of the spool, to merge
 * them as soon as every one is filled. Polling every millisecond (the shortest timer) left the CPU
 * idle a third of the time, all writers waiting for a holder that had not looked yet. Each change
 * in the spool directory triggers a look, coalesced with the changes that came with it; a look
 * reads one byte of each known slot (descriptors kept open for the hold).
 */
export class Gatherer {
  private readonly dir: string
  private readonly slots = new Map<string, number>()
  private readonly watch: PathWatch
  private wake: (() => void) | undefined
  private relist = true
  private readonly probe = Buffer.alloc(1)

  constructor(inboxFile: string) {
    this.dir = spoolDir(inboxFile)
    // Without a watch (none could be set up, or it broke) the caller's timer decides, as with polling.
    this.watch = watchPath(
      this.dir,
      (name, event) => {
        // A slot created or removed (or anything else renamed): list the directory again.
        if (event === 'rename' || name === null) this.relist = true
        this.wake?.()
      },
      { unref: true },
    )
  }

  /** Resolves once every slot of the spool holds entries, or after `ms` (at once without a watch). */
  until(ms: number): Promise<void> {
    if (this.allFilled()) return Promise.resolve()
    return new Promise((resolve) => {
      let looking = false
      const finish = () => {
        clearTimeout(timer)
        this.wake = undefined
        resolve()
      }
      const timer = setTimeout(finish, this.watch.armed ? ms : 0)
      timer.unref()
      this.wake = () => {
        if (looking) return
        looking = true
        // Changes come in bursts (a merge empties eight slots at once): look once per burst.
        setImmediate(() => {
          looking = false
          if (this.wake && this.allFilled()) finish()
        })
      }
    })
  }

  /** How many known slots hold entries. */
  filled(): number {
    this.refresh()
    let n = 0
    for (const fd of this.slots.values()) if (this.holds(fd)) n++
    return n
  }

  close(): void {
    this.watch.close()
    for (const fd of this.slots.values()) fs.closeSync(fd)
    this.slots.clear()
  }

  private allFilled(): boolean {
    this.refresh()
    if (this.slots.size === 0) return false
    for (const fd of this.slots.values()) if (!this.holds(fd)) return false
    return true
  }

  private holds(fd: number): boolean {
    return fs.readSync(fd, this.probe, 0, 1, 0) === 1
  }

  private refresh(): void {
    if (!this.relist) return
    this.relist = false
    let names: string[]
    try {
      // A killed writer's slot stays until it is abandoned long enough (spool.ts): never wait for it.
      names = fs.readdirSync(this.dir).filter((name) => name.endsWith(SLOT_SUFFIX) && ownerAlive(name))
    } catch {
      names = [] // the spool is gone: nothing to gather
    }
    const current = new Set(names)
    for (const [name, fd] of this.slots) {
      if (current.has(name)) continue
      fs.closeSync(fd)
      this.slots.delete(name)
    }
    for (const name of names) {
      if (this.slots.has(name)) continue
      try {
        this.slots.set(name, fs.openSync(path.join(this.dir, name), 'r'))
      } catch {
        // Removed meanwhile: the next listing settles it.
      }
    }
  }
}
