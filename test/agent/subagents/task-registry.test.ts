import { describe, expect, it } from 'vitest'
import { SubagentTasks } from '../../../src/agent/subagents/task-registry.js'

/** A foreground wait whose parent call was aborted before it began still stops the subagent. */
describe('SubagentTasks.foreground', () => {
  it('honours a signal that aborted before the wait: the subagent is stopped, not waited for', async () => {
    const tasks = new SubagentTasks({ maxDepth: 3, maxPerSession: 10, autoBackgroundMs: 0, forkEnabled: false }, () => undefined)
    let sawAbort = false
    // Runs until its own signal aborts, as a real subagent turn does.
    const entry = tasks.start({
      description: 'waits',
      depth: 1,
      background: false,
      run: (signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            sawAbort = true
            resolve({ status: 'completed', text: 'late' })
          }),
        ),
    })
    const parent = new AbortController()
    parent.abort()
    // autoBackgroundMs 0: never moved to the background, so only the abort can end this wait.
    const result = await Promise.race([
      tasks.foreground(entry, parent.signal),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 2_000).unref()),
    ])
    expect(result).not.toBe('hung')
    expect(sawAbort).toBe(true)
    expect(result).toMatchObject({ kind: 'done', outcome: { status: 'stopped' } })
    expect(entry.state).toBe('stopped')
  })
})
