import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { containedArgv, containedProcesses, memberCgroup, reapContained } from '../../src/process/containment.js'
import { isAlive } from '../../src/process/liveness.js'
import { useTempDir } from '../support/home.js'
import { waitFor } from '../support/wait.js'

/**
 * A member's cgroup holds everything it starts, whatever that does to its environment, session
 * or parent; reaping empties it and removes it. Runs where cgroup v2 can be written (Linux, root
 * or a delegated SWARM_CGROUP_ROOT); elsewhere memberCgroup says there is none.
 */
let teamDir: string
useTempDir('swarm-containment-', (d) => (teamDir = path.join(d, 'teams', 't')))
const env = process.env
const here = process.platform === 'linux' && memberCgroup('/nonexistent/probe-team', 'probe', env) !== undefined
afterEach(async () => {
  await reapContained(teamDir, env)
  await reapContained('/nonexistent/probe-team', env)
})

describe.skipIf(!here)('member cgroups', () => {
  it('a child that clears its environment and double-forks stays in the cgroup; reaping kills it and removes the cgroup', async () => {
    const cgroup = memberCgroup(teamDir, 'bob', env)!
    expect(cgroup).toBeDefined()
    const marker = path.join(path.dirname(path.dirname(teamDir)), 'escaped.pid')
    const argv = containedArgv(
      ['/bin/sh', '-c', `(env -i /usr/bin/setsid /bin/sh -c 'echo $$ > ${marker}; exec sleep 300' &); exec sleep 301`],
      cgroup,
    )
    const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', detached: true })
    const escaped = await waitFor('the escaped child', () => (fs.existsSync(marker) ? Number(fs.readFileSync(marker, 'utf8')) : undefined))
    await waitFor('both in the cgroup', () => containedProcesses(teamDir, env).length >= 2 || undefined)
    expect(containedProcesses(teamDir, env).map((p) => p.pid)).toEqual(expect.arrayContaining([child.pid, escaped]))
    expect(containedProcesses(teamDir, env).every((p) => p.member === 'bob')).toBe(true)

    const { killed, survivors } = await reapContained(teamDir, env)
    expect(survivors).toEqual([])
    expect(killed.map((p) => p.pid)).toEqual(expect.arrayContaining([child.pid, escaped]))
    await waitFor('the escaped child gone', () => !isAlive(escaped) || undefined)
    expect(fs.existsSync(cgroup)).toBe(false)
    expect(fs.existsSync(path.dirname(cgroup))).toBe(false)
  })

  it('reaping some members leaves the others running', async () => {
    const run = (name: string) => {
      const argv = containedArgv(['sleep', '302'], memberCgroup(teamDir, name, env)!)
      return spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', detached: true })
    }
    const a = run('a')
    const b = run('b')
    await waitFor('both joined', () => containedProcesses(teamDir, env).length === 2 || undefined)
    const r = await reapContained(teamDir, env, { members: ['a'] })
    expect(r.killed.map((p) => p.pid)).toEqual([a.pid])
    expect(containedProcesses(teamDir, env).map((p) => p.pid)).toEqual([b.pid])
  })

  it('a join that fails stops the launch (exit 126) instead of running uncontained', async () => {
    const argv = containedArgv(['/bin/echo', 'ran'], '/nonexistent/cgroup')
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += String(d)))
    const code = await new Promise<number | null>((r) => child.on('close', r))
    expect(code).toBe(126)
    expect(out).toBe('')
  })
})
