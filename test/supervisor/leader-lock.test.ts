import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ExitCode, type SwarmError } from '../../src/errors.js'
import { teamDir } from '../../src/home/paths.js'
import { procStartTime } from '../../src/process/table.js'
import { acquireLeaderLock, leaderLockPath, runningLeader } from '../../src/supervisor/leader-lock.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'

/* One leader per team: a live holder is named and refused; a dead one's file (or a reused pid's) is taken over. */

const children: number[] = []
afterEach(() => {
  for (const pid of children.splice(0)) process.kill(pid, 'SIGKILL')
})

const homes: IsolatedHome[] = []
afterEach(async () => {
  for (const h of homes.splice(0)) await h.cleanup()
})

function home(): NodeJS.ProcessEnv {
  const h = isolatedHome('swarm-lock-')
  homes.push(h)
  fs.mkdirSync(teamDir('crew', h.env), { recursive: true })
  return h.env
}

function otherProcess(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' })
  children.push(child.pid!)
  return child.pid!
}

function refusal(fn: () => unknown): SwarmError {
  try {
    fn()
  } catch (err) {
    return err as SwarmError
  }
  throw new Error('not refused')
}

describe('leader lock', () => {
  it('is taken, refused to a second taker while held (exit 4, naming the pid), and released', () => {
    const env = home()
    const lock = acquireLeaderLock('crew', env)
    expect(runningLeader('crew', env)).toBe(process.pid)
    const err = refusal(() => acquireLeaderLock('crew', env))
    expect(err.exitCode).toBe(ExitCode.conflict)
    expect(err.message).toContain(`pid ${process.pid}`)
    lock.release()
    expect(fs.existsSync(leaderLockPath('crew', env))).toBe(false)
    acquireLeaderLock('crew', env).release()
  })

  it('refuses while another live process holds it', async () => {
    const env = home()
    const pid = otherProcess()
    await new Promise((r) => setTimeout(r, 50))
    fs.writeFileSync(leaderLockPath('crew', env), JSON.stringify({ pid, started: procStartTime(pid) }))
    expect(refusal(() => acquireLeaderLock('crew', env)).message).toContain(`pid ${pid}`)
    expect(runningLeader('crew', env)).toBe(pid)
  })

  it('takes over the file of a dead leader, of a reused pid, and an unreadable one', () => {
    const env = home()
    const file = leaderLockPath('crew', env)
    for (const stale of [JSON.stringify({ pid: 2 ** 22 + 12345 }), JSON.stringify({ pid: otherProcess(), started: '1' }), '{ not json']) {
      fs.writeFileSync(file, stale)
      expect(runningLeader('crew', env)).toBeUndefined()
      const lock = acquireLeaderLock('crew', env)
      expect(JSON.parse(fs.readFileSync(file, 'utf8')).pid).toBe(process.pid)
      lock.release()
    }
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith('leader.pid'))).toEqual([])
  })
})
