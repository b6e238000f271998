import os from 'node:os'

/*
 * Work that can wait for a spare CPU: run once the machine's processors were mostly idle over the
 * last look. A member's first-turn warm-up (runtime.ts warmFirstTurn) is such work: done while 64
 * teammates start on 2 cores, each one's ~75 ms of CPU made the team's start seconds slower
 * (bench:scale, issue 25); done once they are all idle, it costs nobody anything.
 */

/** How often the machine is looked at (±50 %, so that a team's members do not look at once). */
const LOOK_EVERY_MS = 1000
/** The share of CPU time that must have been idle since the last look. */
const SPARE_SHARE = 0.5
/** After this long without a spare moment, the work is dropped: its absence costs only its saving. */
const GIVE_UP_AFTER_MS = 60_000

/**
 * Runs `work` once the processors were idle at least SPARE_SHARE of the time between two looks,
 * unless `cancelled()` says it is not needed any more (or GIVE_UP_AFTER_MS passed). The timers are
 * unref'd: they never hold the process open.
 */
export function whenCpuSpare(work: () => void, cancelled: () => boolean): void {
  const until = Date.now() + GIVE_UP_AFTER_MS
  let last = cpuTimes()
  const look = () => {
    if (cancelled()) return
    const now = cpuTimes()
    const idle = (now.idle - last.idle) / Math.max(1, now.total - last.total)
    last = now
    if (idle >= SPARE_SHARE) work()
    else if (Date.now() < until) later(look)
  }
  later(look)
}

function later(look: () => void): void {
  setTimeout(look, LOOK_EVERY_MS * (0.5 + Math.random())).unref()
}

/** Idle and total CPU milliseconds of every processor since boot (os.cpus()). */
function cpuTimes(): { idle: number; total: number } {
  let idle = 0
  let total = 0
  for (const { times } of os.cpus()) {
    idle += times.idle
    total += times.user + times.nice + times.sys + times.idle + times.irq
  }
  return { idle, total }
}
