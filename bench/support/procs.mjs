// What the benches read of running processes on Linux (/proc): pids, environment, CPU ticks,
// RSS/PSS (smaps_rollup), children, command lines. Shared by bench/pane-weight.mjs and bench/idle.mjs.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/** Clock ticks per second of /proc/<pid>/stat's utime and stime. */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

export function procPids() {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
}

export function readEnv(pid) {
  try {
    return Object.fromEntries(
      fs
        .readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    )
  } catch {
    return {}
  }
}

/** /proc/<pid>/stat's fields after the command name (state first); undefined when gone. */
export function statFields(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return s.slice(s.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

export function isZombie(pid) {
  return statFields(pid)?.[0] === 'Z'
}

/** utime + stime of each pid, in ticks. */
export function cpuTicks(pids) {
  const out = new Map()
  for (const pid of pids) {
    const f = statFields(pid)
    if (f) out.set(pid, Number(f[11]) + Number(f[12]))
  }
  return out
}

/** RSS and PSS in kB; undefined when gone. */
export function smaps(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0)
    return { rss: kb('Rss'), pss: kb('Pss'), anon: kb('Anonymous') }
  } catch {
    return undefined
  }
}

export function children(pid) {
  return procPids().filter((p) => Number(statFields(p)?.[1]) === pid)
}

export function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()
  } catch {
    return ''
  }
}

/** Live processes carrying team `team`'s marker under `swarmHome` (a bench process never does). */
export function markedProcesses(swarmHome, team) {
  const dir = path.join(swarmHome, 'teams', team)
  return procPids().filter((pid) => {
    const e = readEnv(pid)
    return e.SWARM_TEAM === team && (e.SWARM_TEAM_DIR === undefined || e.SWARM_TEAM_DIR === dir) && !isZombie(pid)
  })
}

/** The pid of the tmux server on socket name `socket` for `env`, if one runs. */
export function tmuxServerPid(env, socket = 'swarm') {
  try {
    const pid = Number(
      execFileSync('tmux', ['-L', socket, 'display-message', '-p', '#{pid}'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    )
    return pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}
