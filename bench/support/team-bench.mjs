// The parts the team benchmarks (idle, pane-weight, scale) share: the command line's options, a
// home of the bench's own (HOME, SWARM_HOME and TMUX_TMPDIR in a temp dir, the loopback model),
// and waiting until every teammate of a team reports idle in its state.json.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** `--name value` from this process's arguments, else `fallback`. */
export function option(name, fallback) {
  const args = process.argv.slice(2)
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : fallback
}

/** A member's state.json, or undefined while it is missing or half-written. */
export function readState(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * Milliseconds from `t0` until every one of `names` is idle (with at least `turns` turns done: a
 * turn's `working` may not be on disk yet when its `idle` is not), or undefined past `limitMs`.
 */
export async function waitReady(h, team, names, { t0 = performance.now(), limitMs, pollMs = 100, turns = 0 }) {
  const dir = path.join(h.env.SWARM_HOME, 'teams', team, 'agents')
  const ready = (s) => s?.status === 'idle' && (s.turns ?? 0) >= turns
  while (performance.now() - t0 < limitMs) {
    if (names.every((m) => ready(readState(path.join(dir, m, 'state.json'))))) return performance.now() - t0
    await sleep(pollMs)
  }
  return undefined
}

/**
 * A bench home in a fresh temp dir (`swarm-bench-<bench>-<label>-`): nothing of the user's HOME,
 * tmux or swarm home, the model at `modelUrl`. `cleanup` kills its tmux server and removes it.
 */
export function benchHome(bench, label, modelUrl) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `swarm-bench-${bench}-${label}-`)))
  const env = { ...process.env, HOME: path.join(base, 'user-home'), SWARM_HOME: path.join(base, 'home'), TMUX_TMPDIR: path.join(base, 'tmux') }
  for (const k of ['TMUX', 'TMUX_PANE', 'SWARM_TMUX_SOCKET', 'SWARM_TEAM', 'SWARM_AGENT_ID', 'SWARM_TEAM_DIR']) delete env[k]
  Object.assign(env, { ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: modelUrl, NO_COLOR: '1' })
  const project = path.join(base, 'project')
  for (const d of [env.HOME, env.TMUX_TMPDIR, project]) fs.mkdirSync(d, { recursive: true })
  return {
    env,
    project,
    cleanup() {
      // No server left is fine: the team's delete closed it.
      spawnSync('tmux', ['-L', 'swarm', 'kill-server'], { env, stdio: 'ignore' })
      fs.rmSync(base, { recursive: true, force: true })
    },
  }
}
