import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isAlive, waitForExit } from '../../src/process/liveness.js'
import { findMarked, markerEnv, withoutMarker } from '../../src/process/marker.js'
import { reapMarked } from '../../src/process/reap.js'
import { type IsolatedHome, isolatedEnv, isolatedHome } from '../support/home.js'
import { runsProgram } from '../support/proc.js'
import { waitFor } from '../support/wait.js'

/*
 * The team marker survives setsid and double forks, tells teams of one name apart by their
 * directory, and reapMarked stops everything carrying it — with its group, including a child
 * that dropped its environment.
 */

const started: number[] = []
const homes: IsolatedHome[] = []
afterEach(async () => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
  for (const h of homes.splice(0)) {
    await reapMarked(path.join(h.base, 'teams/crew'), { graceMs: 0 }) // a failed test's escaped sleeps
    await h.cleanup()
  }
})

function tmpDir(): string {
  const h = isolatedHome('swarm-reap-')
  homes.push(h)
  return h.base
}

/** `sh` writing the pids of a setsid'd double fork and of an env -i child, then sleeping. */
function startMarked(dir: string, agentId: string): { pidFile: string } {
  const pidFile = path.join(dir, `${agentId}.pids`)
  const script = `(setsid sh -c 'echo "escaped $$" >> "${pidFile}"; exec sleep 300' &); env -i sleep 301 & echo "envless $!" >> "${pidFile}"; echo "leader $$" >> "${pidFile}"; exec sleep 302`
  const env = { ...withoutMarker(process.env), ...markerEnv({ team: 'crew', agentId, teamDir: path.join(dir, 'teams/crew') }) }
  const child = spawn('sh', ['-c', script], { env, detached: true, stdio: 'ignore' })
  started.push(child.pid!)
  return { pidFile }
}

async function pidsOf(file: string, count: number): Promise<number[]> {
  return Object.values(await rolesOf(file, count))
}

async function rolesOf(file: string, count: number): Promise<Record<string, number>> {
  return waitFor(`${file} to list ${count} pids, each past its exec`, () => {
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
    const roles = Object.fromEntries(lines.map((l) => [l.split(' ')[0], Number(l.split(' ')[1])]))
    // A pid is written right after its fork: until it has exec'd its `sleep`, /proc still shows the
    // parent's environment (the marker `env -i` is about to drop).
    return lines.length >= count && Object.values(roles).every((pid) => runsProgram(pid, 'sleep')) && roles
  })
}

describe.skipIf(process.platform !== 'linux')('team marker', () => {
  it('finds a team’s processes after setsid and a double fork, and only that team’s', async () => {
    const a = tmpDir()
    const b = tmpDir()
    const { pidFile } = startMarked(a, 'bob@crew')
    startMarked(b, 'bob@crew') // same names, another state root
    const { escaped, envless, leader } = await rolesOf(pidFile, 3)
    const found = await findMarked(path.join(a, 'teams/crew'))
    const pids = found.map((p) => p.pid)
    expect(pids).toEqual(expect.arrayContaining([escaped, leader]))
    expect(pids, 'env -i dropped the marker').not.toContain(envless)
    expect(found.every((p) => p.agentId === 'bob@crew')).toBe(true)
    const other = await findMarked(path.join(b, 'teams/crew'))
    expect(other.map((p) => p.pid).some((pid) => pids.includes(pid))).toBe(false)
    expect(await findMarked(path.join(a, 'teams/crew'), ['alice@crew'])).toEqual([])
  })

  it('reapMarked stops all of them, the child without the marker too (its group), and reports them', async () => {
    const dir = tmpDir()
    const { pidFile } = startMarked(dir, 'bob@crew')
    const all = await pidsOf(pidFile, 3)
    expect(all.every(isAlive)).toBe(true)
    const report = await reapMarked(path.join(dir, 'teams/crew'))
    expect(report.survivors).toEqual([])
    expect(report.killed.length).toBeGreaterThanOrEqual(2)
    expect(await waitForExit(all, 10_000)).toBe(true)
    expect(await findMarked(path.join(dir, 'teams/crew'))).toEqual([])
  })

  it('only the named members are reaped', async () => {
    const dir = tmpDir()
    const bob = await pidsOf(startMarked(dir, 'bob@crew').pidFile, 3)
    const alice = await pidsOf(startMarked(dir, 'alice@crew').pidFile, 3)
    await reapMarked(path.join(dir, 'teams/crew'), { agentIds: ['bob@crew'] })
    expect(await waitForExit(bob, 10_000)).toBe(true)
    expect(alice.every(isAlive)).toBe(true)
  })

  it('never includes the process that looks, or its ancestors', async () => {
    const dir = tmpDir()
    const teamDir = path.join(dir, 'teams/crew')
    const dist = path.resolve(__dirname, '../../dist/process/marker.js')
    const code = `const { findMarked } = await import(${JSON.stringify(dist)}); const f = await findMarked(${JSON.stringify(teamDir)}); console.log(JSON.stringify(f.map((p) => p.pid)))`
    const env = isolatedEnv(dir, markerEnv({ team: 'crew', agentId: 'bob@crew', teamDir }))
    const child = spawn('sh', ['-c', `exec "${process.execPath}" --input-type=module -e '${code}'`], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += String(d)))
    await new Promise((r) => child.once('close', r))
    expect(JSON.parse(out)).toEqual([])
  })
})
