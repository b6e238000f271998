import fs from 'node:fs'
import path from 'node:path'
import { errorMessage } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { FILE_MODE, NOFOLLOW } from '../util/fs.js'
import { openTeammateViews } from '../backends/registry.js'
import type { ViewSpec } from '../backends/types.js'
import type { Env } from '../home/env.js'

/*
 * The panes of a hosted team (`team create --hosted`): its teammates run inside this leader's
 * process, each printing to a file of its own that its pane shows (`tail -F`). Opening panes is
 * queued and done one at a time, then one layout for the lot: a team of 64 starts with one pass.
 */

/** `agents/<name>/screen.log`: what a hosted teammate printed, which its pane shows. */
export function screenLogPath(team: string, name: string, env?: Env): string {
  return path.join(agentDir(team, name, env), 'screen.log')
}

export class TeammateViews {
  private readonly streams = new Map<string, fs.WriteStream>()
  private queue: ViewSpec[] = []
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
    if (known) return known
    const file = screenLogPath(this.team, name, this.env)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    // A link planted in its place is neither written through (O_NOFOLLOW) nor shown: `tail -F` would show what it points to.
    const planted = fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true
    // open(2) flags as a number, which fs.open takes (the typings say only a string).
    const stream = fs.createWriteStream(file, { flags: NOFOLLOW.append as unknown as string, mode: FILE_MODE })
    stream.on('error', (err) => this.warn(`${name}'s output cannot be written to ${file}: ${errorMessage(err)}`))
    this.streams.set(name, stream)
    if (planted) return stream
    this.queue.push({ team: this.team, name, file, ...(color !== undefined && { color }) })
    this.opening ??= this.openQueued()
    return stream
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

  private async openQueued(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue
        this.queue = []
        await openTeammateViews(this.backend, batch, this.env).catch((err: unknown) =>
          this.warn(`could not open the pane of ${batch.map((s) => s.name).join(', ')}: ${errorMessage(err)}`),
        )
      }
    } finally {
      this.opening = undefined
    }
  }
}
