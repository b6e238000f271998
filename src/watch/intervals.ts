/*
 * Every interval of swarm's watches, in one place: the safety polls that catch what a file event
 * missed (a network filesystem, a watch that broke, a process that died without a write), and the
 * timers of waits whose real wake-up is an event. Each line says why it has its value.
 */

export const WATCH_INTERVALS = {
  /**
   * A writer waiting for its spool slot to be merged, the spool's bell watched: the bell rings at
   * every merge and release by a swarm process, not when Claude Code releases the lock or a holder
   * dies (stale after LOCK_STALE_MS), which this timer covers.
   */
  spoolBell: 10,
  /**
   * A marker waiting for the inbox lock, its lock directory watched: normally the release wakes it
   * first; the timer covers a holder that died and filesystems whose events do not arrive.
   */
  lockRelease: 50,
  /** `swarm status --watch`: quiet time after a change before one redraw (a turn writes state, transcript and inboxes at once). */
  statusDebounce: 100,
  /**
   * A recipient's `delivered` mark (mailbox/watch.ts): a locked rewrite of its inbox, made this
   * long after the messages were taken, when they are not read by then. Marked at once, it ran
   * beside every recipient's turn start in a broadcast (issue 25), and a turn that ends sooner
   * marks the messages read, which says delivered too.
   */
  deliveredMark: 1_000,
  /** An inbox's safety sweep (mailbox/watch.ts): re-arms a lost watch, merges a dead writer's spool, reads again. */
  inbox: 1_000,
  /**
   * The remote relay's look at the files it carries (inboxes, pending and resolved requests,
   * members' state.json) when no event came: state files sit a directory below the watched ones.
   */
  remoteRelay: 250,
  /**
   * The same sweep once no event came for a while (watch/idle-poll.ts doubles the pause up to this):
   * 64 idle teammates sweeping every second cost ~15 % of a core (bench/idle.mjs); a message a
   * missed event would hide (a network filesystem) still arrives within it.
   */
  inboxIdle: 16_000,
  /** `swarm logs --follow`: a transcript append the directory watch missed shows within a second. */
  logsFollow: 1_000,
  /** The leader console's look at pending permission requests when no event came (a request is no hurry to the second). */
  pendingRequests: 2_000,
  /** The same look once no request came for a while (watch/idle-poll.ts): an idle team's leader wakes a few times a minute. */
  pendingRequestsIdle: 16_000,
  /** `swarm status --watch`: a redraw this often even without events, for a process that died silently. */
  statusSweep: 2_000,
  /** `swarm web`: a fresh look at every team this often without events (a process that died silently); pages get news only when it changed. */
  webSweep: 5_000,
} as const
