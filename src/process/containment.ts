import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { delay } from './delay.js'

/*
 * Containment that does not depend on the environment: each member's process runs in a cgroup
 * of its own (`<root>/<team key>/<member>`), joined before the member's program starts, so
 * everything it starts — a child that clears its environment (no marker), double-forks or
 * calls setsid — stays in it; only writing another cgroup's `cgroup.procs` leaves, which the
 * sandboxes forbid (/sys is read-only inside). Reaping kills and empties each cgroup; an empty
 * cgroup is the proof. Where no cgroup v2 hierarchy can be written, there is none (marker only).
 */

/** The directory member cgroups go under: SWARM_CGROUP_ROOT (a delegated subtree), else defaultCgroupRoot(). */
function rootFor(env: NodeJS.ProcessEnv): string | undefined {
  return env.SWARM_CGROUP_ROOT || defaultCgroupRoot()
}

/** `<cgroup2 mount>/swarm-<uid>`; undefined without a cgroup v2 hierarchy (whether it can be written is probed at use). */
export function defaultCgroupRoot(): string | undefined {
  const mount = cgroup2Mount()
  return mount ? path.join(mount, `swarm-${process.getuid?.() ?? 0}`) : undefined
}

let mountCache: string | null | undefined
function cgroup2Mount(): string | undefined {
  if (mountCache === undefined) {
    mountCache = null
    try {
      // mountinfo: "... <mount point> <options> - <fstype> <source> <super options>"
      for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
        const [left, right] = line.split(' - ')
        if (right?.split(' ')[0] === 'cgroup2') {
          mountCache = left!.split(' ')[4]!
          break
        }
      }
    } catch {
      // no /proc (not Linux): no cgroups
    }
  }
  return mountCache ?? undefined
}

/** One cgroup per team, named by its directory (two homes with a team `t` never share one). */
function teamCgroup(root: string, teamDir: string): string {
  return path.join(root, createHash('sha256').update(path.resolve(teamDir)).digest('hex').slice(0, 16))
}

const usable = new Map<string, boolean>()

/**
 * The member's cgroup, made when missing; undefined when cgroups cannot be used here. Usable means
 * proven once per process: a throwaway shell joined a cgroup made for the probe.
 */
export function memberCgroup(teamDir: string, member: string, env: NodeJS.ProcessEnv): string | undefined {
  const root = rootFor(env)
  if (!root) return undefined
  if (!usable.has(root)) usable.set(root, probe(root))
  if (!usable.get(root)) return undefined
  const dir = path.join(teamCgroup(root, teamDir), member)
  try {
    fs.mkdirSync(dir, { recursive: true })
    return dir
  } catch {
    return undefined // a hierarchy that let the probe in but not this directory: marker only
  }
}

function probe(root: string): boolean {
  const dir = path.join(root, `probe-${process.pid}`)
  try {
    fs.mkdirSync(dir, { recursive: true })
    const r = spawnSync('/bin/sh', ['-c', JOIN, 'swarm-probe', dir], { stdio: 'ignore', timeout: 5_000 })
    return r.status === 0
  } catch {
    return false
  } finally {
    try {
      fs.rmdirSync(dir)
    } catch {
      // not made, or (briefly) still populated: it is empty once the probe's shell is reaped
    }
  }
}

/** Joins the cgroup named by $1 (0 = the writing process itself). */
const JOIN = 'echo 0 > "$1/cgroup.procs"'

/**
 * argv run inside `cgroup`: a shell joins it and execs the command (its arguments stay positional,
 * never parsed). A join that fails stops the launch (exit 126) rather than run uncontained.
 */
export function containedArgv(argv: string[], cgroup: string): string[] {
  return [
    '/bin/sh',
    '-c',
    `${JOIN} || { echo "swarm: could not join the member's cgroup $1" >&2; exit 126; }; shift; exec "$@"`,
    'swarm-contain',
    cgroup,
    ...argv,
  ]
}

export interface ContainedProcess {
  pid: number
  member: string
  command: string
}

/** Every process in the team's member cgroups (of `members`, default all); none where there are no cgroups. */
export function containedProcesses(teamDir: string, env: NodeJS.ProcessEnv, members?: readonly string[]): ContainedProcess[] {
  const root = rootFor(env)
  if (!root) return []
  const team = teamCgroup(root, teamDir)
  const out: ContainedProcess[] = []
  for (const member of memberDirs(team, members)) {
    for (const pid of pidsIn(path.join(team, member))) if (pid !== process.pid) out.push({ pid, member, command: commandOf(pid) })
  }
  return out
}

/**
 * Kills everything left in the team's member cgroups (after the marker reap gave members their
 * grace): `cgroup.kill`, else SIGKILL to each pid, until each is empty or `timeoutMs` passes;
 * an emptied cgroup is removed. A cgroup holding this process is left alone (a leader deleting
 * its own team). Returns what was killed and what survived.
 */
export async function reapContained(
  teamDir: string,
  env: NodeJS.ProcessEnv,
  o: { members?: readonly string[]; timeoutMs?: number } = {},
): Promise<{ killed: ContainedProcess[]; survivors: ContainedProcess[] }> {
  const root = rootFor(env)
  if (!root) return { killed: [], survivors: [] }
  const team = teamCgroup(root, teamDir)
  const found = containedProcesses(teamDir, env, o.members)
  const dirs = memberDirs(team, o.members)
    .map((m) => path.join(team, m))
    .filter((d) => !pidsIn(d).includes(process.pid))
  for (const dir of dirs) killAll(dir)
  const deadline = Date.now() + (o.timeoutMs ?? 5_000)
  while (dirs.some((d) => pidsIn(d).length > 0) && Date.now() < deadline) {
    await delay(50)
    for (const dir of dirs) if (!fs.existsSync(path.join(dir, 'cgroup.kill'))) killAll(dir)
  }
  for (const dir of dirs) removeEmpty(dir)
  if (!o.members) removeEmpty(team)
  const survivors = containedProcesses(teamDir, env, o.members).filter((p) => dirs.includes(path.join(team, p.member)))
  const alive = new Set(survivors.map((p) => p.pid))
  return { killed: found.filter((p) => !alive.has(p.pid) && dirs.includes(path.join(team, p.member))), survivors }
}

function memberDirs(team: string, members?: readonly string[]): string[] {
  let names: string[]
  try {
    names = fs
      .readdirSync(team, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
  } catch {
    return [] // the team never had a cgroup here
  }
  return members ? names.filter((n) => members.includes(n)) : names
}

function pidsIn(dir: string): number[] {
  try {
    return fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
  } catch {
    return [] // removed, or never made
  }
}

function killAll(dir: string): void {
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1')
    return
  } catch {
    // no cgroup.kill before Linux 5.14: one SIGKILL per pid, repeated until the cgroup is empty
  }
  for (const pid of pidsIn(dir)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
}

function removeEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir)
  } catch {
    // still populated (reported as survivors) or already gone
  }
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
  } catch {
    return ''
  }
}
