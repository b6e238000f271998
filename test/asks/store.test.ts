import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ConflictError, NotFoundError, UsageError } from '../../src/errors.js'
import {
  cancelDeadRequests,
  isPidAlive,
  listPending,
  readPending,
  readResolved,
  resolveRequest,
  writePending,
  type NewPendingRequest,
} from '../../src/asks/store.js'
import { pendingPermissionsDir, resolvedPermissionsDir } from '../../src/home/paths.js'
import { isolatedEnv, useTempDir } from '../support/home.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const distStore = path.resolve(here, '../../dist/asks/store.js')

let env: NodeJS.ProcessEnv
useTempDir('swarm-perm-store-', (d) => (env = { SWARM_HOME: d }))

const request = (id: string, over: Partial<NewPendingRequest> = {}): NewPendingRequest => ({
  id,
  kind: 'permission',
  agent: 'alice',
  agentId: 'alice@t',
  toolName: 'Bash',
  toolUseId: `toolu_${id}`,
  input: { command: 'npm test' },
  description: 'run the tests',
  suggestions: ['Bash(npm test:*)'],
  createdAt: 1_000,
  ...over,
})

describe('pending requests', () => {
  it('writes, reads and lists with age, oldest first', async () => {
    await writePending('t', request('b', { createdAt: 2_000 }), env)
    await writePending('t', request('a', { createdAt: 1_000, kind: 'plan', toolName: 'ExitPlanMode' }), env)
    expect(await readPending('t', 'a', env)).toMatchObject({ id: 'a', kind: 'plan' })
    const { requests, problems } = await listPending('t', { env, now: 5_000 })
    expect(requests.map((r) => [r.id, r.ageMs])).toEqual([
      ['a', 4_000],
      ['b', 3_000],
    ])
    expect(problems).toEqual([])
    const file = path.join(pendingPermissionsDir('t', env), 'a.json')
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })

  it('refuses a duplicate id and ids that are not file names', async () => {
    await writePending('t', request('a'), env)
    await expect(writePending('t', request('a'), env)).rejects.toThrow(ConflictError)
    await expect(writePending('t', request('../x'), env)).rejects.toThrow(UsageError)
    await expect(readPending('t', '.hidden', env)).rejects.toThrow(UsageError)
  })

  it('moves a corrupt pending file aside and reports it', async () => {
    await writePending('t', request('good'), env)
    const bad = path.join(pendingPermissionsDir('t', env), 'bad.json')
    fs.writeFileSync(bad, '{"id": ')
    const { requests, problems } = await listPending('t', { env })
    expect(requests.map((r) => r.id)).toEqual(['good'])
    expect(problems).toHaveLength(1)
    expect(problems[0].file).toBe(bad)
    expect(problems[0].movedTo).toMatch(/bad\.json\.corrupt-/)
    expect(fs.existsSync(problems[0].movedTo!)).toBe(true)
    expect((await listPending('t', { env })).problems).toEqual([])
  })

  it('lists nothing for a team without requests', async () => {
    expect(await listPending('none', { env })).toEqual({ requests: [], problems: [] })
  })
})

describe('resolveRequest', () => {
  it('moves a request to resolved with the decision', async () => {
    await writePending('t', request('a'), env)
    const r = await resolveRequest('t', 'a', { decision: 'deny', feedback: 'use pnpm', resolvedBy: 'team-lead' }, env)
    expect(r).toMatchObject({ id: 'a', decision: 'deny', feedback: 'use pnpm', resolvedBy: 'team-lead', toolName: 'Bash' })
    expect(await readPending('t', 'a', env)).toBeUndefined()
    expect(await readResolved('t', 'a', env)).toEqual(r)
    expect((await listPending('t', { env })).requests).toEqual([])
    await expect(writePending('t', request('a'), env)).rejects.toThrow(/already resolved/)
  })

  it('keeps always and edited input', async () => {
    await writePending('t', request('a'), env)
    const r = await resolveRequest(
      't',
      'a',
      { decision: 'approve', always: true, updatedInput: { command: 'npm test -- --run' }, resolvedBy: 'cli' },
      env,
    )
    expect(r).toMatchObject({ always: true, updatedInput: { command: 'npm test -- --run' } })
  })

  it('names the earlier decision when already resolved; NotFound for an unknown id', async () => {
    await writePending('t', request('a'), env)
    await resolveRequest('t', 'a', { decision: 'approve', resolvedBy: 'first' }, env)
    const err = await resolveRequest('t', 'a', { decision: 'deny', resolvedBy: 'second' }, env).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ConflictError)
    expect((err as Error).message).toContain('approve by first')
    await expect(resolveRequest('t', 'nope', { decision: 'approve', resolvedBy: 'x' }, env)).rejects.toThrow(NotFoundError)
  })

  it('lets exactly one of many concurrent resolvers win', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`)
    for (const id of ids) await writePending('t', request(id), env)
    const resolvers = ['a', 'b', 'c', 'd']
    const outcomes = await Promise.all(
      ids.flatMap((id) =>
        resolvers.map((by) =>
          resolveRequest('t', id, { decision: 'approve', resolvedBy: by }, env).then(
            () => ({ id, by, won: true }),
            (err: unknown) => {
              expect(err).toBeInstanceOf(ConflictError)
              return { id, by, won: false }
            },
          ),
        ),
      ),
    )
    for (const id of ids) {
      const winners = outcomes.filter((o) => o.id === id && o.won)
      expect(winners, id).toHaveLength(1)
      expect((await readResolved('t', id, env))?.resolvedBy).toBe(winners[0].by)
    }
    expect(fs.readdirSync(pendingPermissionsDir('t', env))).toEqual([])
    expect(fs.readdirSync(resolvedPermissionsDir('t', env)).sort()).toEqual(ids.map((id) => `${id}.json`).sort())
  })

  it.skipIf(!fs.existsSync(distStore))('lets exactly one of two resolver processes win each request', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `p${i}`)
    for (const id of ids) await writePending('t', request(id), env)
    const script = path.join(here, 'fixtures', 'resolver.mjs')
    // Both start resolving at once, even when a loaded machine is slow to start node.
    const startAt = String(Date.now() + 1_500)
    const run = (name: string) =>
      new Promise<{ won: string[]; lost: string[]; errors: string[] }>((resolve, reject) => {
        execFile(
          process.execPath,
          [script, 't', name, startAt, ...ids],
          { env: isolatedEnv(env.SWARM_HOME!, env), timeout: 20_000 },
          (err, stdout, stderr) => {
            if (err) reject(new Error(`${name} failed: ${err.message}\n${stderr}`))
            else resolve(JSON.parse(stdout))
          },
        )
      })
    const [one, two] = await Promise.all([run('one'), run('two')])
    expect(one.errors).toEqual([])
    expect(two.errors).toEqual([])
    expect([...one.won, ...two.won].sort()).toEqual([...ids].sort())
    expect(one.won.filter((id) => two.won.includes(id))).toEqual([])
    expect([...one.lost, ...two.lost].sort()).toEqual([...ids].sort())
  })
})

describe('cancelDeadRequests', () => {
  it('cancels requests of dead teammates and keeps the living', async () => {
    const dead = spawn(process.execPath, ['-e', '0'])
    await new Promise((r) => dead.on('exit', r))
    await writePending('t', request('alive', { pid: process.pid }), env)
    await writePending('t', request('dead', { pid: dead.pid, agent: 'bob' }), env)
    await writePending('t', request('nopid', { agent: 'carol' }), env)
    const cancelled = await cancelDeadRequests('t', (r) => (r.pid === undefined ? r.agent !== 'carol' : isPidAlive(r.pid)), {
      env,
      resolvedBy: 'team-lead',
    })
    expect(cancelled.map((r) => [r.id, r.decision, r.feedback])).toEqual([
      ['dead', 'cancelled', 'bob is no longer running'],
      ['nopid', 'cancelled', 'carol is no longer running'],
    ])
    expect((await listPending('t', { env })).requests.map((r) => r.id)).toEqual(['alive'])
    expect((await readResolved('t', 'dead', env))?.resolvedBy).toBe('team-lead')
  })

  it('skips a request answered meanwhile', async () => {
    await writePending('t', request('a'), env)
    const cancelled = await cancelDeadRequests(
      't',
      async (r) => {
        await resolveRequest('t', r.id, { decision: 'approve', resolvedBy: 'lead' }, env)
        return false
      },
      { env },
    )
    expect(cancelled).toEqual([])
    expect((await readResolved('t', 'a', env))?.decision).toBe('approve')
  })

  it('isPidAlive', () => {
    expect(isPidAlive(process.pid)).toBe(true)
    expect(isPidAlive(0)).toBe(false)
    expect(isPidAlive(-1)).toBe(false)
  })
})
