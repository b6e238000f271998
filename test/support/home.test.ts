import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isAlive } from '../../src/process/liveness.js'
import { isolatedEnv, useTempDir } from './home.js'
import { otherTestRuns } from './run-isolation.js'
import { waitFor } from './wait.js'

/**
 * What every process a test starts gets, through real processes: a HOME of its own (what a shell
 * writes "to ~" lands in the test's temp dir), git that commits with no ~/.gitconfig anywhere; and
 * the run's view of the machine — its own TMPDIR, and another run's vitest told apart from its own.
 */

let root: string
useTempDir('swarm-home-env-', (d) => (root = d))

describe('isolatedEnv', () => {
  it("gives a child a HOME, XDG dirs and a git config of its own: what it writes to ~ stays in the test's dir", () => {
    const env = isolatedEnv(root)
    expect(env.HOME).toBe(path.join(root, 'user-home'))
    expect(env.HOME).not.toBe(os.homedir())
    for (const k of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'GIT_CONFIG_GLOBAL'])
      expect(env[k]?.startsWith(`${env.HOME}${path.sep}`), k).toBe(true)
    execFileSync('sh', ['-c', 'echo "set -g allow-passthrough on" > ~/.tmux.conf; git config --global core.editor true'], { env })
    expect(fs.readFileSync(path.join(root, 'user-home', '.tmux.conf'), 'utf8')).toContain('allow-passthrough')
    expect(fs.readFileSync(path.join(root, 'user-home', '.gitconfig'), 'utf8')).toContain('editor = true')
  })

  it('commits with git and no identity configured anywhere but the environment', () => {
    const env = isolatedEnv(root)
    const repo = path.join(root, 'repo')
    fs.mkdirSync(repo)
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    git('init', '-q', '-b', 'main')
    git('commit', '-q', '--allow-empty', '-m', 'first')
    expect(git('log', '-1', '--format=%an <%ae>').trim()).toBe('Swarm Test <swarm@example.invalid>')
  })
})

describe('the run', () => {
  it("has its own TMPDIR, not the machine's", () => {
    expect(path.basename(path.dirname(os.tmpdir()))).toMatch(/^swarm-vitest-/)
    expect(process.env.TMUX_TMPDIR).toBe(path.join(path.dirname(os.tmpdir()), 'tmux'))
  })

  it.skipIf(!fs.existsSync('/proc/self/stat'))("tells another run's processes from its own descendants and ancestors", async () => {
    // Marked by a name of this test's own, so that this run's guard does not take them for another run.
    const mark = `swarm-other-run-${process.pid}-${Date.now()}`
    // A child of this worker, so a descendant of the vitest main process: this run's.
    const own = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', mark], { stdio: 'ignore' })
    // Reparented away from this run (its shell exits at once): as another run's would be.
    const pidFile = path.join(root, 'other.pid')
    execFileSync('sh', ['-c', `"${process.execPath}" -e 'setTimeout(() => {}, 30000)' ${mark} </dev/null >/dev/null 2>&1 & echo $! > ${pidFile}`])
    const other = Number(fs.readFileSync(pidFile, 'utf8'))
    try {
      await waitFor('both running', () => isAlive(own.pid!) && isAlive(other))
      // The worker's parent is the vitest main process (the forks pool).
      const runs = otherTestRuns(process.ppid, new RegExp(mark))
      expect(runs).toEqual([other])
      // The main process's ancestors (npx, the shell) are its own too, whatever they are called.
      expect(otherTestRuns(process.pid, /./)).not.toContain(process.ppid)
    } finally {
      own.kill('SIGKILL')
      process.kill(other, 'SIGKILL')
    }
  })
})
