import fsp from 'node:fs/promises'
import path from 'node:path'
import { type PathWatch, watchPath } from './path-watch.js'

/**
 * Watches one file by name through its DIRECTORY, even before that directory exists.
 *
 * Why the directory: fs.watch on the file itself follows the inode, so it goes deaf after the
 * first rename over the file (every atomic write), and chokidar throttles change events and
 * drops the trailing write of a burst (docs/architecture.md §9). An inotify/FSEvents watch on the directory
 * reports each rename onto the file's name.
 *
 * Until the directory exists, the nearest existing ancestor is watched for the next path
 * component to appear, then the watch moves down. `check()` re-arms after the directory was
 * deleted or replaced; the owner calls it from its safety poll (an interval of WATCH_INTERVALS).
 */
export class DirWatch {
  private watcher: PathWatch | undefined
  private watched: { dir: string; ino: number } | undefined
  private arming: Promise<void> | undefined
  private rearm = false
  private closed = false

  constructor(
    private readonly file: string,
    /** Called for every event that may concern the file (and after every re-arm). */
    private readonly onChange: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Arms the watch (idempotent); resolves once it watches the deepest existing directory. */
  check(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.arming) {
      this.rearm = true
      return this.arming
    }
    this.arming = this.armLoop()
    return this.arming
  }

  close(): void {
    this.closed = true
    this.watcher?.close()
    this.watcher = undefined
  }

  private async armLoop(): Promise<void> {
    try {
      do {
        this.rearm = false
        await this.arm()
      } while (this.rearm && !this.closed)
    } catch (err) {
      this.onError(err)
    } finally {
      this.arming = undefined
    }
  }

  private async arm(): Promise<void> {
    const target = path.dirname(this.file)
    for (;;) {
      if (this.closed) return
      const { dir, ino } = await deepestExisting(target)
      // close() came while we looked: a watch opened now would never be closed.
      if (this.closed) return
      if (this.watched?.dir === dir && this.watched.ino === ino && this.watcher) return
      this.watcher?.close()
      this.watcher = undefined
      this.watched = undefined
      const watcher = watchPath(dir, (name) => this.onEvent(dir, name), {
        onError: (err) => {
          // The watched directory went away (or the watch broke): look again.
          if (this.watcher !== watcher) return
          this.watcher = undefined
          this.watched = undefined
          if (!isGone(err)) this.onError(err)
          void this.check()
        },
      })
      if (!watcher.armed) {
        if (isGone(watcher.error)) continue // removed between stat and watch: look again
        throw watcher.error
      }
      this.watcher = watcher
      this.watched = { dir, ino }
      // Something created further down between the stat and the watch would never be reported.
      if (dir !== target && (await deepestExisting(target)).dir !== dir) continue
      this.onChange()
      return
    }
  }

  private onEvent(dir: string, filename: string | null): void {
    if (this.closed) return
    const target = path.dirname(this.file)
    if (dir === target) {
      if (filename === null || filename === path.basename(this.file)) this.onChange()
      return
    }
    const next = path.relative(dir, target).split(path.sep)[0]
    if (filename === null || filename === next) void this.check()
  }
}

async function deepestExisting(dir: string): Promise<{ dir: string; ino: number }> {
  for (let current = dir; ; current = path.dirname(current)) {
    try {
      const stat = await fsp.stat(current)
      if (stat.isDirectory()) return { dir: current, ino: stat.ino }
    } catch (err) {
      if (!isGone(err)) throw err
    }
    if (path.dirname(current) === current) throw new Error(`no existing ancestor of ${dir}`)
  }
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
