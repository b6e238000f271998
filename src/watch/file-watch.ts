import fs from 'node:fs'
import { DirWatch } from './dir-watch.js'
import { type PathWatch, watchPath } from './path-watch.js'

/**
 * Watches one file by name, woken only by that file: its own inode is watched (writes in place
 * and its replacement by a rename, whoever writes it), and the watch moves to the new inode each
 * time the name points at another one. Only while the file does not exist is its directory
 * watched (DirWatch), for its creation.
 *
 * Why not the directory throughout: every inbox of a team lives in one directory, so a directory
 * watch per inbox woke every member at each write of any inbox — N² wakeups for a broadcast to N
 * (issue 25: 64 pane teammates took 1.2–7.9 s to see one `send '*'`).
 *
 * An inode number can be reused once the inode is freed, so the watched file is also held open:
 * while the descriptor is open its inode lives, no other file gets its number, and a stat of the
 * name showing that number means the name still points at the watched inode.
 */
export class FileWatch {
  private watcher: PathWatch | undefined
  private fd: number | undefined
  private ino: number | undefined
  private dirWatch: DirWatch | undefined
  private closed = false

  constructor(
    private readonly file: string,
    /** Called for every event of the file (and after every re-arm). */
    private readonly onChange: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Arms the watch (idempotent; re-arms on the file's current inode); resolves once it is armed. */
  check(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.arm()) return Promise.resolve()
    return this.dirWatch?.check() ?? Promise.resolve()
  }

  close(): void {
    this.closed = true
    this.dropFile()
    this.dirWatch?.close()
    this.dirWatch = undefined
  }

  /** True when the file's own inode is watched; else the directory is (or is being) watched. */
  private arm(): boolean {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.closed) return true
      const now = inodeOf(this.file)
      if (now === undefined) {
        this.dropFile()
        this.watchDirectory()
        return false
      }
      if (now === this.ino && this.watcher) return true
      this.dropFile()
      const fd = openNoFollow(this.file)
      if (fd === undefined) continue // replaced or removed meanwhile (or a symbolic link): look again
      const ino = fs.fstatSync(fd).ino
      const watcher = watchPath(this.file, () => this.onEvent(), {
        onError: (err) => {
          if (this.watcher !== watcher) return
          this.dropFile()
          if (!isGone(err)) this.onError(err)
          this.onEvent()
        },
      })
      // The name pointed at the held inode before and after the watch was set up: it is the one watched.
      if (!watcher.armed || inodeOf(this.file) !== ino) {
        const unarmed = !watcher.armed && !isGone(watcher.error) ? watcher.error : undefined
        watcher.close()
        fs.closeSync(fd)
        if (unarmed !== undefined) {
          this.onError(unarmed) // e.g. out of inotify watches: the directory watch and the owner's poll cover it
          break
        }
        continue
      }
      this.watcher = watcher
      this.fd = fd
      this.ino = ino
      this.dirWatch?.close()
      this.dirWatch = undefined
      this.onChange() // anything written before the watch was set up is read now
      return true
    }
    this.watchDirectory()
    return false
  }

  private onEvent(): void {
    if (this.closed) return
    // A write in place leaves the inode; a rename over the name or a removal needs a new watch
    // (arm() then calls onChange itself).
    if (this.ino !== undefined && inodeOf(this.file) === this.ino && this.watcher) this.onChange()
    else if (this.arm() === false) this.onChange()
  }

  private watchDirectory(): void {
    if (this.dirWatch) return
    this.dirWatch = new DirWatch(
      this.file,
      () => {
        // The file appeared (or the directory was re-armed): watch the file itself from now on.
        if (!this.arm()) this.onChange()
      },
      this.onError,
    )
    void this.dirWatch.check()
  }

  private dropFile(): void {
    this.watcher?.close()
    this.watcher = undefined
    if (this.fd !== undefined) fs.closeSync(this.fd)
    this.fd = undefined
    this.ino = undefined
  }
}

function inodeOf(file: string): number | undefined {
  try {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    return stat?.isFile() ? stat.ino : undefined
  } catch {
    return undefined // ENOTDIR and the like: as good as missing
  }
}

function openNoFollow(file: string): number | undefined {
  try {
    return fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
