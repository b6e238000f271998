import { spawn, spawnSync } from 'node:child_process'
import path from 'node:path'
import { execa } from 'execa'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { listPending, readResolved, writePending } from '../../../src/asks/store.js'
import { type IsolatedHome, isolatedHome } from '../../support/home.js'
import { waitFor } from '../../support/wait.js'

const BIN = path.resolve(import.meta.dirname, '../../../bin/swarm.js')
const HAS_BWRAP = spawnSync('bwrap', ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', 'true']).status === 0
let h: IsolatedHome

beforeEach(async () => {
  h = isolatedHome('swarm-sweep-guard-')
  expect((await execa(process.execPath, [BIN, 'team', 'create', 't', '--agents', 'bob', '--no-start'], { env: h.env, reject: false })).exitCode).toBe(
    0,
  )
})
afterEach(() => h.cleanup())

/** bob's request `id`, waiting in process `pid`. */
function request(id: string, pid: number, extra: Record<string, unknown> = {}) {
  return {
    id,
    kind: 'permission' as const,
    agent: 'bob',
    agentId: 'bob@t',
    toolName: 'Bash',
    toolUseId: `tu-${id}`,
    input: { command: 'make' },
    description: 'make',
    createdAt: Date.now(),
    pid,
    ...extra,
  }
}

/** A live process standing in for a waiting teammate, and its request on file. */
async function waitingTeammate(id: string, extra: Record<string, unknown> = {}): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  await writePending('t', request(id, child.pid!, extra), h.env)
  return {
    pid: child.pid!,
    async stop() {
      child.kill('SIGKILL')
      await exited
    },
  }
}

async function perms(prefix: string[], env: NodeJS.ProcessEnv = h.env): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, ...rest] = [...prefix, process.execPath, BIN, 'perms', 't', '--json']
  const r = await execa(cmd, rest, { env, reject: false, timeout: 20_000 })
  return { code: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) }
}

const pendingIds = async () => (await listPending('t', { env: h.env })).requests.map((r) => r.id)

describe('the dead-request sweep cancels only requests whose teammate is surely gone', () => {
  it.runIf(HAS_BWRAP)('a listing from a pid-namespaced sandbox (every pid looks dead there) cancels nothing', async () => {
    const bob = await waitingTeammate('r1')
    try {
      const r = await perms(['bwrap', '--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc'])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ requests: [{ id: 'r1' }], cancelled: [] })
      expect(await pendingIds()).toEqual(['r1'])
    } finally {
      await bob.stop()
    }
  })

  it("a teammate's environment never sweeps, even a request whose teammate died; the lead's does", async () => {
    const bob = await waitingTeammate('r2')
    await bob.stop()
    const asTeammate = await perms([], { ...h.env, SWARM_TEAM: 't', SWARM_AGENT_NAME: 'bob', SWARM_AGENT_ID: 'bob@t' })
    expect(asTeammate.code, asTeammate.stderr).toBe(0)
    expect(JSON.parse(asTeammate.stdout).cancelled).toEqual([])
    expect(await pendingIds()).toEqual(['r2'])
    const asLead = await perms([])
    expect(JSON.parse(asLead.stdout).cancelled).toMatchObject([{ id: 'r2', reason: 'bob is no longer running' }])
    expect(await readResolved('t', 'r2', h.env)).toMatchObject({ decision: 'cancelled', resolvedBy: 'swarm' })
  })

  it('a reused pid (another start time on file) counts as gone; one sighted from another pid namespace is kept', async () => {
    const other = await waitingTeammate('r3', { pidStarted: '1', pidNs: 'pid:[0]' })
    const mine = await waitingTeammate('r4')
    try {
      // r3's namespace is not ours: it is never swept from here. Give it ours, with a start time the pid never had.
      const ns = (await listPending('t', { env: h.env })).requests.find((r) => r.id === 'r4')!.pidNs!
      await writePending('t', request('r5', mine.pid, { pidStarted: '1', pidNs: ns }), h.env)
      const r = await perms([])
      expect(JSON.parse(r.stdout).cancelled.map((c: { id: string }) => c.id)).toEqual(['r5'])
      await waitFor('r3 and r4 still pending', async () => (await pendingIds()).join() === 'r3,r4')
    } finally {
      await other.stop()
      await mine.stop()
    }
  })
})
