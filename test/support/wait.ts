/**
 * The one wait helper of the test suite: poll a check until it holds, or fail naming what was awaited.
 * Test-side waiting only (the code under test does not poll); a timeout is a hang guard, never a
 * measurement of speed.
 */

/** What a test may print on a timeout, besides the label: e.g. the agent's pane, a console's text. */
export interface WaitOptions {
  /** Pause between checks (default 20 ms). */
  intervalMs?: number
  /** Extra text for the timeout error (called once, on the timeout). */
  output?: () => string
}

/** What a check's value is once it counts: not `undefined`, `null`, `false`, `0` or `''`. */
type Truthy<T> = Exclude<T, undefined | null | false | 0 | ''>

/**
 * Calls `check` until it returns a truthy value and returns that value. A check that throws is
 * tried again; on the timeout the error names `what`, the last error the check threw and `output`.
 * (vi.waitFor resolves on the first non-throwing call, whatever it returns, and vi.waitUntil names
 * nothing: neither fits checks that return `false` or `undefined` until the state is there.)
 */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000, options: WaitOptions = {}): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await check()
      if (v) return v as Truthy<T>
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      const why = last === undefined ? '' : `: ${last instanceof Error ? last.message : String(last)}`
      const out = options.output ? `\n--- output ---\n${options.output()}` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}${out}`)
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 20))
  }
}
