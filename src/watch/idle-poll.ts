/*
 * A safety poll that slows down while nothing happens. After an event (`wake()`) it runs every
 * `minMs`; each run with no event since the one before doubles the pause, up to `maxMs`. An idle
 * teammate's watches then wake it a few times a minute instead of every second (issue 25: a
 * leader and 64 idle teammates polling at 1 Hz cost ~15 % of a core; bench/idle.mjs), while a
 * watch that misses events (a network filesystem) is still looked behind within `maxMs`.
 */

export interface IdlePoll {
  /** Something happened: poll every `minMs` again, the next time `minMs` from now. */
  wake(): void
  close(): void
}

export interface IdlePollOptions {
  minMs: number
  /** The longest pause while idle; `minMs` (or less) polls at a fixed rate. */
  maxMs: number
  /** Let the process exit while only this poll is pending. */
  unref?: boolean
}

export function idlePoll(run: () => void, opts: IdlePollOptions): IdlePoll {
  const maxMs = Math.max(opts.minMs, opts.maxMs)
  let pause = opts.minMs
  let woken = false
  let closed = false
  let timer: NodeJS.Timeout | undefined
  const schedule = (ms: number) => {
    clearTimeout(timer)
    timer = setTimeout(fire, ms)
    if (opts.unref) timer.unref()
  }
  const fire = () => {
    if (closed) return
    pause = woken ? opts.minMs : Math.min(pause * 2, maxMs)
    woken = false
    schedule(pause)
    run()
  }
  schedule(pause)
  return {
    wake() {
      if (closed) return
      woken = true
      // Already at the fast rate: the next run is due within minMs anyway.
      if (pause === opts.minMs) return
      pause = opts.minMs
      schedule(pause)
    },
    close() {
      closed = true
      clearTimeout(timer)
    },
  }
}
