import { ensureDir } from '../util/fs.js'
import { teamsDir } from '../home/paths.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { watchTree, type TreeWatch } from '../watch/tree-watch.js'
import { snapshot, type Snapshot, type WebRequest } from './snapshot.js'

/**
 * The one live view of every team that all open pages share: the teams directory watched as
 * `swarm status --watch` watches a team (one tree watch, a slow sweep), the snapshot read again
 * after each burst of changes — one read at a time, a burst during a read read once more after
 * it — and handed on only when it changed. However many pages are open, the files are read once.
 */

export interface LiveOptions {
  env: NodeJS.ProcessEnv
  /** A new snapshot (different from the last one). */
  onChange(s: Snapshot): void
  /** A request seen for the first time (not those pending when the view started). */
  onNewRequest?(team: string, r: WebRequest): void
  /** A read failed as a whole; the next change reads again. */
  onError?(err: unknown): void
}

export class LiveView {
  private current: Snapshot = { teams: [] }
  private text = ''
  private seen = new Set<string>()
  private reading: Promise<void> | undefined
  private again = false
  private watch: TreeWatch | undefined
  private closed = false

  constructor(private readonly options: LiveOptions) {}

  get snapshot(): Snapshot {
    return this.current
  }

  /** Reads once, then follows the teams directory (created if missing, so a first team is seen). */
  async start(): Promise<void> {
    const root = teamsDir(this.options.env)
    await ensureDir(root)
    await this.read(false)
    this.watch = watchTree(root, () => void this.refresh(), { debounceMs: 100, sweepMs: WATCH_INTERVALS.webSweep })
    await this.watch.ready
  }

  /** Reads again now (coalesced with a read in progress). */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.reading) {
      this.again = true
      return this.reading
    }
    this.reading = this.read(true).finally(() => {
      this.reading = undefined
      if (this.again && !this.closed) {
        this.again = false
        void this.refresh()
      }
    })
    return this.reading
  }

  async close(): Promise<void> {
    this.closed = true
    await this.watch?.close()
    await this.reading
  }

  private async read(announce: boolean): Promise<void> {
    let next: Snapshot
    try {
      next = await snapshot(this.options.env)
    } catch (err) {
      this.options.onError?.(err)
      return
    }
    if (this.closed) return
    const ids = new Set<string>()
    for (const t of next.teams)
      for (const r of t.requests) {
        ids.add(r.id)
        if (announce && !this.seen.has(r.id)) this.options.onNewRequest?.(t.team, r)
      }
    this.seen = ids
    const text = JSON.stringify(next)
    if (text === this.text) return
    this.text = text
    this.current = next
    this.options.onChange(next)
  }
}
