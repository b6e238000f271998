/*
 * This process's turns on their way to their first model request. A hosted leader runs every
 * teammate: at a broadcast they all start a turn at once, and what a turn does once it is over —
 * its inbox's read mark, its state.json write, its idle notification to team-lead, each a locked
 * rewrite — ran between the other recipients' starts, so the last request waited for the first
 * ones' bookkeeping (bench:scale tmux@64 with 4 burners, issue 25). That bookkeeping waits until no
 * turn of the process is on its way, TURN_END_WAIT_MAX_MS at most. A process running one member
 * never waits: its own turn is no longer on its way once it has ended.
 */

/** The longest a turn's end waits for the other turns' requests. */
export const TURN_END_WAIT_MAX_MS = 1_000

let onTheirWay = 0
let waiters: Array<() => void> = []

/** Counts a turn as on its way to its first request until the returned function is called (once; later calls do nothing). */
export function turnOnItsWay(): () => void {
  onTheirWay++
  let done = false
  return () => {
    if (done) return
    done = true
    if (--onTheirWay > 0) return
    const ready = waiters
    waiters = []
    for (const resolve of ready) resolve()
  }
}

/** Resolves once no turn of this process is on its way to its first request, or after TURN_END_WAIT_MAX_MS. */
export function afterTurnStarts(): Promise<void> {
  if (onTheirWay === 0) return Promise.resolve()
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer)
      waiters = waiters.filter((w) => w !== finish)
      resolve()
    }
    const timer = setTimeout(finish, TURN_END_WAIT_MAX_MS)
    waiters.push(finish)
  })
}
