import fs from 'node:fs'
import path from 'node:path'
import { errorMessage } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { FILE_MODE, NOFOLLOW } from '../util/fs.js'
import { agentId } from '../home/paths.js'
import { closeTeammateViews, openTeammateViews } from '../backends/registry.js'
import type { ViewSpec } from '../backends/types.js'
import type { Env } from '../home/env.js'

/*
 * The panes of a hosted team (`team create --hosted`): its teammates run inside this leader's
 * process, each printing to a file of its own that its pane shows (`tail -F`). Opening panes is
 * queued and done one at a time, then one layout for the lot: a team of 64 starts with one pass.
 * A teammate that ends (killed, exited, crashed) takes its view with it, in the same queue — closes
 * before opens, so one started again gets a new view, never its old one closed under it.
 */

/** `agents/<name>/screen.log`: what a hosted teammate printed, which its pane shows. */
export function screenLogPath(team: string, name: string, env?: Env): string {
  return path.join(agentDir(team, name, env), 'screen.log')
}

export class TeammateViews {
  private readonly streams = new Map<string, fs.WriteStream>()
  /** The pane of each teammate with a view open. */
  private readonly panes = new Map<string, string>()
  /** Teammates that ended since their view was asked for: it is closed; started again, they get a new one. */
  private readonly ended = new Set<string>()
  private queue: ViewSpec[] = []
  private closing: string[] = []
  private opening: Promise<void> | undefined

  /** `backend` shows the panes (tmux); `warn` reports a pane that could not be opened, or a file that cannot be written. */
  constructor(
    private readonly team: string,
    private readonly backend: string,
    private readonly env: Env,
    private readonly warn: (line: string) => void,
  ) {}

  /** Where `name`'s output goes; its pane is opened the first time. */
  stream(name: string, color?: string): fs.WriteStream {
    const known = this.streams.get(name)
    if (known && !this.ended.delete(name)) return known
    const file = screenLogPath(this.team, name, this.env)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    // A link planted in its place is neither written through (O_NOFOLLOW) nor shown: `tail -F` would show what it points to.
    const planted = fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true
    // Kept open once made (a teammate started again writes on): one that ended may still print while it stops.
    const stream = known ?? this.open(name, file)
    if (planted) return stream
    this.queue.push({ team: this.team, name, file, ...(color !== undefined && { color }) })
    this.opening ??= this.openQueued()
    return stream
  }

  /**
   * `name` ended (`how`: killed, exited 0, crashed: …): a last line in its file says so, and its
   * view closes — a pane left open would show a dead screen as if it still ran. Its file stays.
   */
  end(name: string, how: string): void {
    const stream = this.streams.get(name)
    if (!stream || this.ended.has(name)) return
    this.ended.add(name)
    stream.write(`\n— ${name} ended (${how}) —\n`)
    // Not opened yet: it never will be. Opened (or opening): closed once that is done.
    this.queue = this.queue.filter((s) => s.name !== name)
    this.closing.push(name)
    this.opening ??= this.openQueued()
  }

  /** The writer of `name`'s own lines, when it has a view (ExecutorOptions.outputFor). */
  sink(name: string): ((text: string) => void) | undefined {
    const stream = this.streams.get(name)
    return stream && ((text) => void stream.write(text))
  }

  /** Resolves once every pane asked for so far is open (or reported as not). */
  async settled(): Promise<void> {
    while (this.opening) await this.opening
  }

  /** Flushes and closes the files; the panes stay until the team's session closes. */
  async close(): Promise<void> {
    await this.settled()
    await Promise.all([...this.streams.values()].map((s) => new Promise<void>((resolve) => s.end(resolve))))
    this.streams.clear()
  }

  private open(name: string, file: string): fs.WriteStream {
    // open(2) flags as a number, which fs.open takes (the typings say only a string).
    const stream = fs.createWriteStream(file, { flags: NOFOLLOW.append as unknown as string, mode: FILE_MODE })
    stream.on('error', (err) => this.warn(`${name}'s output cannot be written to ${file}: ${errorMessage(err)}`))
    this.streams.set(name, stream)
    return stream
  }

  private async openQueued(): Promise<void> {
    try {
      while (this.closing.length || this.queue.length) {
        const closing = this.closing.flatMap((name) => {
          const paneId = this.panes.get(name)
          this.panes.delete(name)
          return paneId ? [{ paneId, agentId: agentId(name, this.team) }] : []
        })
        this.closing = []
        await closeTeammateViews(this.backend, this.team, closing, this.env).catch((err: unknown) =>
          this.warn(`could not close the pane of an ended teammate: ${errorMessage(err)}`),
        )
        const batch = this.queue
        this.queue = []
        if (!batch.length) continue
        try {
          const ids = await openTeammateViews(this.backend, batch, this.env)
          for (const [k, id] of ids.entries()) if (id) this.panes.set(batch[k]!.name, id)
        } catch (err) {
          this.warn(`could not open the pane of ${batch.map((s) => s.name).join(', ')}: ${errorMessage(err)}`)
        }
      }
    } finally {
      this.opening = undefined
    }
  }
}
