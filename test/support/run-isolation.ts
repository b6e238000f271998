import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { compare, describeDifference, HOME_WATCHED, isEmpty, namesIn, snapshot, without } from './home-guard.js'
import { userHomeEnv } from './home.js'
import { defaultCgroupRoot } from '../../src/process/containment.js'

/**
 * A test run of its own, set up by the vitest main process before any worker starts: a run
 * directory whose TMPDIR, HOME (XDG, git identity) and TMUX_TMPDIR every worker and every child
 * inherits; and the guard — at the end, the user's HOME and /tmp as they were, the run's TMPDIR empty.
 */

/**
 * Swarm's names in a shared temp dir: the suite's and swarm's `swarm-…` dirs, tmux's socket dir —
 * not a benchmark's home (`swarm-bench-…`, bench/support/team-bench.mjs): no test runs a bench, and
 * one running beside the suite is not the suite's leak.
 */
const SWARM_TMP = /^swarm-(?!bench-)/
const TMUX_SOCKET = /^(claude-)?swarm/

export interface RunIsolation {
  /** The run directory (removed by `finish`). */
  root: string
  /** Checks, removes the run directory; the problems found, one paragraph each ([] when none). */
  finish(): string[]
}

/** Pid → parent pid of every process (Linux /proc; empty elsewhere, where no other run is seen). */
function parents(): Map<number, number> {
  const out = new Map<number, number>()
  for (const name of namesIn('/proc', (n) => /^\d+$/.test(n))) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // exited while we looked
    }
  }
  return out
}

/** A vitest process: its main process (bin/vitest, vitest.mjs) or a worker (vitest/dist/workers). */
const VITEST = /node_modules\/(\.bin\/vitest|vitest\/)/

/**
 * Processes of another test run on this machine (their command line matching `pattern`): neither
 * `self`'s ancestors nor its descendants.
 */
export function otherTestRuns(self = process.pid, pattern = VITEST): number[] {
  const ppid = parents()
  const chain = (pid: number) => {
    const seen: number[] = []
    for (let p = pid; p > 1 && !seen.includes(p); p = ppid.get(p) ?? 0) seen.push(p)
    return seen
  }
  const ancestors = new Set(chain(self))
  return [...ppid.keys()].filter((pid) => {
    if (ancestors.has(pid) || chain(pid).includes(self)) return false
    try {
      return pattern.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
    } catch {
      return false
    }
  })
}

/** The swarm entries of a shared temp dir: `swarm-…` in it, swarm's tmux sockets in its `tmux-<uid>`. */
function swarmTmpNames(tmp: string, own: string): Set<string> {
  const tmuxDir = `tmux-${process.getuid?.() ?? 0}`
  return new Set([
    ...namesIn(tmp, (n) => SWARM_TMP.test(n) && n !== own),
    ...namesIn(path.join(tmp, tmuxDir), (n) => TMUX_SOCKET.test(n)).map((n) => path.join(tmuxDir, n)),
  ])
}

export interface IsolateRunOptions {
  /** The environment the workers inherit (process.env); its SWARM_HOME_GUARD_IGNORE, paths under HOME the guard leaves out. */
  env?: NodeJS.ProcessEnv
  /** The user's home and temp dir the guard watches (os.homedir(), os.tmpdir()). */
  home?: string
  tmp?: string
  /** Other test runs now on this machine (otherTestRuns). */
  otherRuns?: () => number[]
}

/**
 * Makes the run directory under the real temp dir and exports its TMPDIR, HOME and TMUX_TMPDIR
 * into process.env (the workers' environment is built from it after global setup). What a test
 * legitimately finds under the real HOME is named explicitly: npm's cache and config, the agent
 * CLIs' cache (scripts/install-agent-clis.mjs).
 */
export function isolateRun(o: IsolateRunOptions = {}): RunIsolation {
  const { env = process.env, home: realHome = os.homedir(), tmp: realTmp = os.tmpdir(), otherRuns = () => otherTestRuns() } = o
  const homeBefore = snapshot(realHome, HOME_WATCHED)
  // What a live session of the developer's own writes meanwhile (their Claude Code's transcripts): named, never guessed.
  const ignored = (env.SWARM_HOME_GUARD_IGNORE ?? '').split(':').filter(Boolean).map(path.normalize)
  const root = fs.realpathSync(fs.mkdtempSync(path.join(realTmp, 'swarm-vitest-')))
  const tmpBefore = swarmTmpNames(realTmp, path.basename(root))
  const tmp = path.join(root, 'tmp')
  fs.mkdirSync(tmp)
  fs.mkdirSync(path.join(root, 'tmux'))
  const user = userHomeEnv(root)
  Object.assign(env, user, {
    TMPDIR: tmp,
    TMP: tmp,
    TEMP: tmp,
    TMUX_TMPDIR: path.join(root, 'tmux'),
    npm_config_cache: env.npm_config_cache || path.join(realHome, '.npm'),
    npm_config_userconfig: env.npm_config_userconfig || path.join(realHome, '.npmrc'),
    SWARM_AGENT_CLI_CACHE: env.SWARM_AGENT_CLI_CACHE || path.join(realHome, '.cache', 'swarm', 'agent-clis'),
  })
  // The run's own cgroup root (process/containment.ts): what its teams leave there is killed and removed at the end.
  const cgroups = runCgroupRoot(root)
  if (cgroups) env.SWARM_CGROUP_ROOT = cgroups
  const runHomeBefore = snapshot(user.HOME, ['.'])
  // Another run's tests may write the user's HOME or /tmp meanwhile: seen, they are not blamed on this one.
  const others = new Set(otherRuns())
  const sampler = setInterval(() => {
    for (const pid of otherRuns()) others.add(pid)
  }, 2_000).unref()

  return {
    root,
    finish() {
      clearInterval(sampler)
      if (cgroups) removeCgroupTree(cgroups)
      for (const pid of otherRuns()) others.add(pid)
      const problems: string[] = []
      // The user's HOME and /tmp are shared with any other test run on this machine (an older
      // checkout's writes the real ~/.tmux.conf): while one is seen, what changed is said, not blamed.
      const shared = (what: string, lines: string[]) => {
        if (lines.length === 0) return
        if (others.size === 0) problems.push([what, ...lines].join('\n'))
        else {
          const pids = `${[...others].slice(0, 3).join(', ')}${others.size > 3 ? ', …' : ''}`
          process.stderr.write(`home guard: while another test run was active (pid ${pids}), not blamed on this run — ${what}\n${lines.join('\n')}\n`)
        }
      }
      const home = without(compare(homeBefore, snapshot(realHome, HOME_WATCHED)), ignored)
      shared(`the test run changed your home (${realHome}):`, describeDifference(realHome, home))
      const runHome = compare(runHomeBefore, snapshot(user.HOME, ['.']))
      if (!isEmpty(runHome))
        problems.push(
          [
            `a test process wrote to the run's shared HOME — start it with isolatedEnv (test/support/home.ts):`,
            ...describeDifference(user.HOME, runHome),
          ].join('\n'),
        )
      const leftovers = namesIn(tmp, () => true)
      if (leftovers.length)
        problems.push(
          [`left in the run's TMPDIR (${tmp}) — remove what a test creates:`, ...leftovers.sort().map((n) => `  leaked   ${path.join(tmp, n)}`)].join(
            '\n',
          ),
        )
      const tmuxDir = path.join(root, 'tmux', `tmux-${process.getuid?.() ?? 0}`)
      const servers = namesIn(tmuxDir, () => true)
      if (servers.length)
        problems.push(
          [
            `a tmux server left running on the run's TMUX_TMPDIR — reap it (test/support/tmux.ts):`,
            ...servers.sort().map((n) => `  leaked   ${path.join(tmuxDir, n)}`),
          ].join('\n'),
        )
      const gained = [...swarmTmpNames(realTmp, path.basename(root))].filter((n) => !tmpBefore.has(n)).sort()
      shared(
        `the test run left swarm entries in ${realTmp} (a path that ignores TMPDIR / TMUX_TMPDIR):`,
        gained.map((n) => `  gained   ${path.join(realTmp, n)}`),
      )
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
      return problems
    },
  }
}

/** `<swarm's cgroup root>/test-<run dir name>`, made; undefined where member cgroups cannot be made. */
function runCgroupRoot(runDir: string): string | undefined {
  const base = defaultCgroupRoot()
  if (!base) return undefined
  const dir = path.join(base, `test-${path.basename(runDir)}`)
  try {
    fs.mkdirSync(dir, { recursive: true })
    fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK)
    return dir
  } catch {
    return undefined // no writable cgroup v2 here: the run's teams have no cgroups either
  }
}

/** Kills what is left in `dir`'s cgroups and removes them, deepest first (up to 2 s). */
function removeCgroupTree(dir: string): void {
  const dirs: string[] = []
  const walk = (d: string): void => {
    dirs.push(d)
    for (const e of namesIn(d, (n) => fs.statSync(path.join(d, n), { throwIfNoEntry: false })?.isDirectory() === true)) walk(path.join(d, e))
  }
  walk(dir)
  for (const d of dirs.reverse()) {
    try {
      fs.writeFileSync(path.join(d, 'cgroup.kill'), '1')
    } catch {
      // gone, or a kernel before cgroup.kill: rmdir below fails and the directory stays
    }
    for (const end = Date.now() + 2_000; fs.existsSync(d) && Date.now() < end; ) {
      try {
        fs.rmdirSync(d)
      } catch {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20) // still emptying
      }
    }
  }
}
