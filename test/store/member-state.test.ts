import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { AgentStateFile, STATUS_WRITE_DELAY_MS } from '../../src/agent/state.js'
import { turnOnItsWay } from '../../src/agent/turn-starts.js'
import { agentDir, teamDir } from '../../src/home/paths.js'
import { addMemberSpend, readMemberState, updateMemberState } from '../../src/store/member-state.js'
import { createTeam, deleteMemberFiles, deleteTeamFiles } from '../../src/teams/team-store.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'
import { REPO, requireBuilt } from '../support/repo.js'

/**
 * `agents/<name>/state.json` has one writer, `store/member-state.ts`: updates from several
 * processes at once all land (lock + read + merge + atomic write), a deleted team or a removed
 * member is never brought back, and no other module of src/ names the file.
 */
let h: IsolatedHome
beforeEach(async () => {
  h = isolatedHome('swarm-member-state-')
  await createTeam({ name: 't', cwd: h.project, members: [{ name: 'gem', agent: 'gemini', cwd: h.project }] }, h.env)
})
afterEach(() => h.cleanup())

/** `n` processes, each writing its own field `w<i>` `rounds` times through the store, all at once. */
function concurrentWriters(n: number, rounds: number): Promise<number[]> {
  const store = pathToFileURL(path.join(REPO, 'dist/store/member-state.js')).href
  const script = `
    const { updateMemberState } = await import(${JSON.stringify(store)})
    const i = Number(process.argv[1])
    for (let r = 1; r <= ${rounds}; r++) await updateMemberState('t', 'gem', { status: 'working', ['w' + i]: r }, process.env, { create: true })
  `
  return Promise.all(
    Array.from({ length: n }, (_, i) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(i)], { env: h.env, stdio: ['ignore', 'ignore', 'inherit'] })
      return new Promise<number>((resolve, reject) => {
        child.on('error', reject)
        child.on('close', (code) => resolve(code ?? -1))
      })
    }),
  )
}

describe('the member state store', () => {
  it('8 processes updating one state.json at once: every field of every writer lands', async () => {
    requireBuilt('dist/store/member-state.js')
    await updateMemberState('t', 'gem', { status: 'starting', model: 'm1' }, h.env, { create: true })
    expect(await concurrentWriters(8, 10)).toEqual(Array(8).fill(0))
    const state = (await readMemberState('t', 'gem', h.env)) as Record<string, unknown>
    for (let i = 0; i < 8; i++) expect(state[`w${i}`], `writer ${i}`).toBe(10)
    expect(state).toMatchObject({ status: 'working', model: 'm1' })
  }, 60_000)

  it('merges: a patch keeps what others wrote, `undefined` removes a field, `since` moves only with the status', async () => {
    const first = await updateMemberState('t', 'gem', { status: 'working', currentTask: '3', usage: usage(5) }, h.env, { create: true })
    const kept = await updateMemberState('t', 'gem', { status: 'working', detail: 'Bash' }, h.env)
    expect(kept?.after).toMatchObject({ currentTask: '3', usage: usage(5), detail: 'Bash', since: first?.after.since })
    const idle = await updateMemberState('t', 'gem', { status: 'idle', currentTask: undefined }, h.env)
    expect(idle?.before?.status).toBe('working')
    expect(idle?.after.currentTask).toBeUndefined()
    expect(idle?.after.since).toBeGreaterThanOrEqual(first!.after.since!)
    const fresh = await updateMemberState('t', 'gem', { status: 'starting' }, h.env, { replace: true })
    expect(fresh?.after.usage).toBeUndefined()
  })

  it('never brings back a deleted team, nor (unless it is starting) a removed member', async () => {
    await updateMemberState('t', 'gem', { status: 'working' }, h.env, { create: true })
    await deleteMemberFiles('t', 'gem', h.env)
    expect(await updateMemberState('t', 'gem', { status: 'exited' }, h.env)).toBeUndefined()
    expect(fs.existsSync(agentDir('t', 'gem', h.env))).toBe(false)
    expect(await updateMemberState('t', 'gem', { status: 'starting' }, h.env, { create: true })).toBeDefined()

    // swarm's agent on its way out of a deleted team: its late writes (queued) write nothing.
    const own = new AgentStateFile({ team: 't', name: 'gem', env: h.env, initial: { status: 'idle' }, fresh: true })
    await own.update({})
    await deleteTeamFiles('t', h.env)
    await own.update({ status: 'exited' })
    expect(await updateMemberState('t', 'gem', { status: 'dead' }, h.env, { create: true })).toBeUndefined()
    expect(fs.existsSync(teamDir('t', h.env))).toBe(false)
  })

  it('spend is added, never overwritten: two writers for one member (its runtime, a batch run) both count', async () => {
    const own = new AgentStateFile({ team: 't', name: 'gem', env: h.env, initial: { status: 'working' }, fresh: true })
    await own.update({})
    await own.addSpend({ usage: usage(10), costUsd: 0.25 }, { turns: 1 })
    await addMemberSpend('t', 'gem', { usage: usage(5), costUsd: 0.5 }, { env: h.env })
    await own.addSpend({ usage: usage(1), costUsd: 0.125 }, { turns: 2 })
    await own.flushed()
    expect(await readMemberState('t', 'gem', h.env)).toMatchObject({ costUsd: 0.875, turns: 2, usage: { inputTokens: 16, outputTokens: 3 } })
    // Without create, a member with no record is written nothing; with it, the record says what the writer knows.
    expect(await addMemberSpend('t', 'lead', { usage: usage(1), costUsd: 1 }, { env: h.env })).toBeUndefined()
    const made = await addMemberSpend('t', 'lead', { usage: usage(1), costUsd: 1 }, { env: h.env, create: true })
    expect(made?.after).toMatchObject({ status: 'exited', costUsd: 1, usage: usage(1) })
  })

  it("an agent's updates queued before its write starts go as one write, every field and spend in it", async () => {
    const own = new AgentStateFile({ team: 't', name: 'gem', env: h.env, initial: { status: 'starting' }, fresh: true })
    await own.update({})
    const dir = agentDir('t', 'gem', h.env)
    let writes = 0
    const watcher = fs.watch(dir, (event, name) => {
      if (event === 'rename' && name === 'state.json') writes++ // each write renames a temp file over it
    })
    try {
      const turn = [
        // Made in one go, as a turn that ends at once does: the write starts after the last of them.
        own.update({ status: 'working', detail: 'task #1' }),
        own.addSpend({ usage: usage(10), costUsd: 0.25 }, { turns: 1 }),
        own.addSpend({ usage: usage(2), costUsd: 0.5 }, { turns: 2 }),
        own.update({ status: 'idle', detail: undefined }),
      ]
      await Promise.all(turn)
      await new Promise((r) => setTimeout(r, 100)) // the watcher's last events
    } finally {
      watcher.close()
    }
    expect(writes).toBe(1)
    const onDisk = await readMemberState('t', 'gem', h.env)
    expect(onDisk).toMatchObject({ status: 'idle', turns: 2, costUsd: 0.75, usage: { inputTokens: 12 } })
    expect(onDisk?.detail).toBeUndefined()
    // A spend alone waits for the next status write, or for flushed() (a budget check reads it from disk).
    void own.addSpend({ usage: usage(1), costUsd: 0.125 }, { turns: 3 })
    await own.flushed()
    expect(await readMemberState('t', 'gem', h.env)).toMatchObject({ costUsd: 0.875, turns: 3 })
  })

  it("a turn's `working` (soon) waits for the process's other turns to be on their way, then goes with the turn's idle", async () => {
    const own = new AgentStateFile({ team: 't', name: 'gem', env: h.env, initial: { status: 'idle' }, fresh: true })
    await own.update({})
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }) // nothing is released by a timer unless the test says so
    const other = turnOnItsWay() // another member's turn in this process, its request not sent yet
    try {
      const working = own.update({ status: 'working' }, { soon: true })
      const spend = own.addSpend({ usage: usage(10), costUsd: 0.25 }, { turns: 1 })
      await vi.advanceTimersByTimeAsync(STATUS_WRITE_DELAY_MS) // a spend alone would have gone by now, were no turn on its way
      expect(await readMemberState('t', 'gem', h.env)).toMatchObject({ status: 'idle' })
      other()
      await vi.advanceTimersByTimeAsync(STATUS_WRITE_DELAY_MS - 1)
      expect((await readMemberState('t', 'gem', h.env))?.turns).toBeUndefined() // nothing written yet
      await Promise.all([working, spend, own.update({ status: 'idle' })]) // the turn's end: one write with all of it
      expect(await readMemberState('t', 'gem', h.env)).toMatchObject({ status: 'idle', turns: 1, costUsd: 0.25 })
      // A long turn: its `working` is on disk STATUS_WRITE_DELAY_MS after the others are on their way.
      const long = own.update({ status: 'working' }, { soon: true })
      await vi.advanceTimersByTimeAsync(STATUS_WRITE_DELAY_MS)
      await long
      expect(await readMemberState('t', 'gem', h.env)).toMatchObject({ status: 'working' })
    } finally {
      other()
      vi.useRealTimers()
    }
  })

  it('a corrupt state.json is moved aside (kept) and the record starts afresh', async () => {
    await updateMemberState('t', 'gem', { status: 'working' }, h.env, { create: true })
    const file = path.join(agentDir('t', 'gem', h.env), 'state.json')
    fs.writeFileSync(file, '{"status": "work')
    expect((await updateMemberState('t', 'gem', { status: 'idle' }, h.env))?.after.status).toBe('idle')
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith('state.json.corrupt-'))).toHaveLength(1)
  })

  it('no module of src/ but the store names state.json', () => {
    const offenders: string[] = []
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name)
        if (e.isDirectory()) walk(p)
        else if (p.endsWith('.ts') && p !== path.join(REPO, 'src/store/member-state.ts')) {
          // Code, not comments: a quoted file name, or a path joined from 'state' + '.json'.
          const code = fs.readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
          if (/['"`][^'"`\n]*state\.json['"`]/.test(code)) offenders.push(path.relative(REPO, p))
        }
      }
    }
    walk(path.join(REPO, 'src'))
    expect(offenders).toEqual([])
  })
})

function usage(inputTokens: number) {
  return { inputTokens, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }
}
