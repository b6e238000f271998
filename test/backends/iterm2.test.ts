import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { launcherScript, leaderSessionId, parseSplitOutput } from '../../src/backends/iterm2.js'
import { ownPaneIo, paneIo } from '../../src/backends/registry.js'
import type { PaneExecutor } from '../../src/backends/types.js'
import { UsageError } from '../../src/errors.js'
import { agentDir, teamDir } from '../../src/home/paths.js'
import { memberCgroup } from '../../src/process/containment.js'
import { cgroupsHere } from '../support/cgroups.js'
import { type Harness, makeHarness, readJson } from './harness.js'
import { waitFor } from '../support/wait.js'

describe('iTerm2 helpers', () => {
  it('takes the leader session from ITERM_SESSION_ID and the new id from split output', () => {
    expect(leaderSessionId({ ITERM_SESSION_ID: 'w0t1p0:8F3A-11' })).toBe('8F3A-11')
    expect(leaderSessionId({ ITERM_SESSION_ID: 'nocolon' })).toBeUndefined()
    expect(leaderSessionId({})).toBeUndefined()
    expect(parseSplitOutput('Created new pane: ABC-123\n')).toBe('ABC-123')
    expect(parseSplitOutput('something else')).toBeUndefined()
  })

  it('writes a launcher that quotes everything and refuses bad variable names', () => {
    const files = { launcher: '/x/launch.sh', pid: '/x/pane.pid', exit: '/x/pane.exit' }
    const script = launcherScript({ team: 't', name: 'n', cwd: "/it's", argv: ['a b', '$(x)'], env: { K: "v'1" } }, files)
    expect(script).toContain(`cd -- '/it'\\''s'`)
    expect(script).toContain(`'a b' '$(x)'`)
    expect(script).toContain(`export K='v'\\''1'`)
    expect(() => launcherScript({ team: 't', name: 'n', cwd: '/', argv: ['x'], env: { 'A;B': '1' } }, files)).toThrow(/invalid environment/)
  })
})

describe('iTerm2 backend (fake it2)', () => {
  let h: Harness
  const it2 = (...args: string[]) => execFileSync('it2', args, { env: h.env, encoding: 'utf8' })
  const calls = () =>
    fs
      .readFileSync(path.join(h.env.FAKE_IT2_DIR!, 'calls.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[])
  beforeEach(() => {
    h = makeHarness('iterm2')
  })
  afterEach(async () => {
    await h.cleanup()
  })

  it('splits the leader first (-v), then each last teammate; removes the launcher once started', async () => {
    const a = await h.start('ti', 'a', ['record', path.join(h.env.SWARM_HOME!, 'a.json')], { env: { SECRET_TOKEN: 'sk-zzz' } })
    const b = await h.start('ti', 'b', ['record', path.join(h.env.SWARM_HOME!, 'b.json')])
    const splits = calls().filter((c) => c[1] === 'split')
    expect(splits[0]).toEqual(['session', 'split', '-v', '-s', 'LEADER-0000'])
    expect(splits[1]).toEqual(['session', 'split', '-s', a.paneId])
    expect(b.paneId).not.toBe(a.paneId)
    await waitFor('a to start', () => readJson(path.join(h.env.SWARM_HOME!, 'a.json')), 15_000)
    expect(fs.existsSync(path.join(agentDir('ti', 'a', h.env), 'launch.sh'))).toBe(false)
    expect(calls().some((c) => c.join(' ').includes('sk-zzz'))).toBe(false)
  })

  it.skipIf(!cgroupsHere())("runs the teammate in its member's cgroup, as a tmux pane's (what team delete reaps by)", async () => {
    const out = path.join(h.env.SWARM_HOME!, 'c.json')
    await h.start('ti', 'c', ['record', out])
    const seen = await waitFor('c to start', () => readJson<{ pid: number }>(out), 15_000)
    const cgroup = fs.readFileSync(`/proc/${seen.pid}/cgroup`, 'utf8').trim().split('::')[1]!
    const expected = memberCgroup(teamDir('ti', h.env), 'c', h.env)!
    expect(expected.endsWith(cgroup)).toBe(true)
    await h.executor.kill(`c@ti`)
    await waitFor('the cgroup to empty', () => fs.readFileSync(path.join(expected, 'cgroup.procs'), 'utf8').trim() === '', 15_000)
    fs.rmdirSync(expected)
    fs.rmdirSync(path.dirname(expected))
  })

  it('prunes a session that vanished and splits from the one before; reports it closed', async () => {
    const a = await h.start('ti', 'a', ['record', path.join(h.env.SWARM_HOME!, 'a.json')])
    const b = await h.start('ti', 'b', ['record', path.join(h.env.SWARM_HOME!, 'b.json')])
    it2('session', 'close', '-f', '-s', b.paneId) // the user closed b's pane
    const _c = await h.start('ti', 'c', ['record', path.join(h.env.SWARM_HOME!, 'c.json')])
    const splits = calls().filter((x) => x[1] === 'split')
    expect(splits.at(-2)).toEqual(['session', 'split', '-s', b.paneId])
    expect(splits.at(-1)).toEqual(['session', 'split', '-s', a.paneId])
    expect((h.executor as unknown as { pruned: string[] }).pruned).toEqual([b.paneId])
    await waitFor('b to be dead', async () => (await h.executor.status(['b@ti'])).get('b@ti')?.state === 'dead', 15_000)
    const status = await h.executor.status(['a@ti', 'b@ti', 'c@ti'])
    expect(status.get('a@ti')?.state).toBe('alive')
    expect(status.get('c@ti')?.state).toBe('alive')
  })

  it("types into a teammate's session through it2: a bracketed paste with controls shown, keys as their bytes, the screen read back", async () => {
    const spawned = await (h.executor as PaneExecutor).spawn({
      team: 'ti',
      name: 'k',
      cwd: h.env.SWARM_HOME!,
      argv: ['/bin/sh', '-c', 'stty -echo; exec cat -v'],
    })
    h.track(spawned.pid!)
    // The member's own pane, as its wrapper finds it: the backend from its env, the session iTerm2 set.
    const pane = ownPaneIo({ ...h.env, SWARM_BACKEND: 'iterm2', ITERM_SESSION_ID: `w0t0p1:${spawned.paneId}` })!
    await pane.paste('a\x1bb\r\nc')
    await pane.keys(['Enter'])
    await waitFor('the paste on its screen', async () => (await pane.screen()).includes('^[[200~a^[b'), 10_000)
    expect(await paneIo('iterm2', { paneId: spawned.paneId }, h.env).screen()).toContain('c^[[201~')
    await expect(pane.keys(['F13'])).rejects.toThrow(UsageError)
    expect(calls().filter((c) => c[1] === 'send')).toEqual([
      ['session', 'send', '-s', spawned.paneId, '--', '\x1b[200~a^[b\nc\x1b[201~'],
      ['session', 'send', '-s', spawned.paneId, '--', '\r'],
    ])
  })

  it('fails clearly when it2 cannot reach iTerm2', async () => {
    fs.mkdirSync(h.env.FAKE_IT2_DIR!, { recursive: true })
    fs.writeFileSync(path.join(h.env.FAKE_IT2_DIR!, 'api-disabled'), '')
    await expect(h.start('ti', 'a', ['exit', '0'])).rejects.toThrow(/it2 session split failed: .*Python API/)
  })
})
