import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { isAlive, waitForExit } from '../../src/process/liveness.js'
import { killTree, processTrees } from '../../src/process/tree.js'

/**
 * The tests' own view of the isolated tmux server (TMUX_TMPDIR in the test's env, socket `swarm`
 * unless named): is tmux here, which sessions it has, and reaping it by its socket, never by name.
 */

export const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

/** Kills the isolated tmux server by its socket and waits for its panes' processes, which tmux only hangs up on its way out. */
export async function reapTmux(env: NodeJS.ProcessEnv, socket = 'swarm'): Promise<void> {
  let pids: number[] = []
  try {
    const out = execFileSync('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_pid}'], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    pids = out
      .split('\n')
      .map(Number)
      .filter((p) => p > 0)
  } catch {
    return // no server: nothing to reap
  }
  const trees = [...(await processTrees(pids)).values()].flat()
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { env, stdio: 'ignore' })
  } catch {
    // it went away by itself meanwhile
  }
  if (!(await waitForExit(trees, 2_000))) await Promise.all(trees.filter(isAlive).map((p) => killTree(p, { graceMs: 0 })))
}

/** Every tmux server under the test's TMUX_TMPDIR: swarm's, a demo's `swarm-demo-<pid>`, a test's own, Claude Code's. */
export function tmuxSockets(env: NodeJS.ProcessEnv): string[] {
  try {
    return fs.readdirSync(path.join(env.TMUX_TMPDIR!, `tmux-${process.getuid?.() ?? 0}`))
  } catch {
    return []
  }
}

/** Reaps every tmux server under the test's TMUX_TMPDIR (a test that fails midway leaves any of them). */
export async function reapAllTmux(env: NodeJS.ProcessEnv): Promise<void> {
  for (const socket of tmuxSockets(env)) await reapTmux(env, socket)
}

/** tmux sessions on the isolated server ([] when it is not running). */
export function tmuxSessions(env: NodeJS.ProcessEnv, socket = 'swarm'): string[] {
  try {
    return execFileSync('tmux', ['-L', socket, 'list-sessions', '-F', '#{session_name}'], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(Boolean)
  } catch {
    return []
  }
}
