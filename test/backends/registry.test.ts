import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { PaneBackend } from '../../src/backends/backend.js'
import { detectBackend, resolveBackend, systemDetectInputs } from '../../src/backends/detect.js'
import { backendChoices, createExecutor, ownPaneIo, paneBackends, parseBackendChoice, registerBackend } from '../../src/backends/registry.js'
import { teamBackend } from '../../src/backends/team-backend.js'
import type { PaneDriver, PaneExecutor, ProcessState, SpawnedTeammate, TeammateSpawnConfig } from '../../src/backends/types.js'
import { UsageError } from '../../src/errors.js'
import { teamStatus } from '../../src/supervisor/status.js'
import { stopTeamMembers } from '../../src/supervisor/stop.js'
import { createTeam, readTeam, updateMember } from '../../src/teams/team-store.js'
import { isolatedEnv, useTempDir } from '../support/home.js'

/**
 * A new backend is one file and one registry line: a fake pane backend, registered at run time,
 * shows up in every list the registry feeds (CLI choices, detection, explicit --backend, status,
 * stop, a team's recorded backend) without any other module naming it.
 */

/** The fake's executor: panes are entries in a JSON file, so what status and stop did is visible. */
class FakeExecutor implements PaneExecutor {
  readonly type = 'fake'
  readonly kind = 'pane' as const
  readonly supportsHideShow = false
  constructor(private readonly file: string) {}
  private read(): { panes: Record<string, 'alive' | 'killed'>; stopped: string[] } {
    return fs.existsSync(this.file) ? JSON.parse(fs.readFileSync(this.file, 'utf8')) : { panes: {}, stopped: [] }
  }
  private write(s: ReturnType<FakeExecutor['read']>): void {
    fs.writeFileSync(this.file, JSON.stringify(s))
  }
  async spawn(config: TeammateSpawnConfig): Promise<SpawnedTeammate> {
    const s = this.read()
    const agentId = `${config.name}@${config.team}`
    s.panes[agentId] = 'alive'
    this.write(s)
    return { agentId, backendType: this.type, paneId: `fake-${config.name}` }
  }
  async spawnMany(configs: TeammateSpawnConfig[]): Promise<Array<PromiseSettledResult<SpawnedTeammate>>> {
    const results: Array<PromiseSettledResult<SpawnedTeammate>> = []
    for (const c of configs) results.push({ status: 'fulfilled', value: await this.spawn(c) }) // one at a time: each rewrites the file
    return results
  }
  async sendMessage(): Promise<void> {}
  async terminate() {
    return { outcome: 'timeout' as const }
  }
  async killMany(agentIds: string[]): Promise<void> {
    for (const id of agentIds) await this.kill(id) // one at a time: each rewrites the file
  }
  async kill(agentId: string): Promise<void> {
    const s = this.read()
    s.panes[agentId] = 'killed'
    this.write(s)
  }
  async isActive(agentId: string): Promise<boolean> {
    return this.read().panes[agentId] === 'alive'
  }
  async status(ids: string[]): Promise<Map<string, ProcessState>> {
    const s = this.read()
    return new Map(ids.map((id) => [id, s.panes[id] === 'alive' ? { state: 'alive' } : { state: 'dead', reason: 'fake pane gone' }]))
  }
  async ensureSession() {
    return { paneId: 'fake-lead', created: false }
  }
  async ensureLeader() {
    return this.ensureSession()
  }
  async stopTeam(team: string): Promise<void> {
    const s = this.read()
    s.stopped.push(team)
    this.write(s)
  }
  async hide(): Promise<void> {}
  async show(): Promise<void> {}
  async attach(): Promise<number> {
    return 0
  }
}

/** The fake's panes' keyboards: what was typed into each, in a JSON file of its own. */
function fakeDriver(file: string, paneId: string): PaneDriver {
  const typed = (): Record<string, string[]> => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {})
  const add = async (what: string) => {
    const all = typed()
    all[paneId] = [...(all[paneId] ?? []), what]
    fs.writeFileSync(file, JSON.stringify(all))
  }
  return {
    paste: (piece) => add(`paste:${piece}`),
    keys: (keys) => add(`keys:${keys.join(' ')}`),
    type: (text) => add(`type:${text}`),
    screen: async () => (typed()[paneId] ?? []).join('\n'),
  }
}

let home: string
let env: NodeJS.ProcessEnv
let unregister: (() => void) | undefined
const state = () => JSON.parse(fs.readFileSync(path.join(home, 'fake.json'), 'utf8'))

function fakeBackend(): PaneBackend {
  return {
    type: 'fake',
    kind: 'pane',
    label: 'FakeTerm',
    probe: [process.execPath, '-e', 'process.exit(0)'],
    standalone: false,
    inside: (e) => e.FAKE_TERM === '1',
    probeWhenInside: true,
    installHint: () => 'install FakeTerm',
    create: () => new FakeExecutor(path.join(home, 'fake.json')),
    ownPane: (e) => (e.FAKE_PANE ? { paneId: e.FAKE_PANE } : undefined),
    paneDriver: (pane) => fakeDriver(path.join(home, 'typed.json'), pane.paneId),
  }
}

useTempDir('swarm-registry-', (d) => {
  home = d
  env = isolatedEnv(home, { SWARM_HOME: home })
})
afterEach(() => {
  unregister?.()
  unregister = undefined
})

describe('backend registry', () => {
  it('a registered backend is a --backend choice, and is gone again once unregistered', () => {
    expect(() => parseBackendChoice('fake')).toThrow(UsageError)
    unregister = registerBackend(fakeBackend())
    expect(parseBackendChoice('fake')).toBe('fake')
    expect(backendChoices()).toEqual(['auto', 'tmux', 'iterm2', 'fake', 'in-process'])
    expect(paneBackends().map((b) => b.type)).toContain('fake')
    expect(() => registerBackend(fakeBackend())).toThrow(/already registered/)
    unregister()
    unregister = undefined
    const err = (() => {
      try {
        parseBackendChoice('fake')
      } catch (e) {
        return e as UsageError
      }
    })()
    expect(err?.hint).toBe('use auto, tmux, iterm2 or in-process')
  })

  it('detection picks it inside its own terminal, and --backend fake runs its probe', async () => {
    unregister = registerBackend(fakeBackend())
    const inputs = { ...systemDetectInputs({ ...env, FAKE_TERM: '1' }), isTTY: true }
    expect(await detectBackend(inputs)).toMatchObject({ backend: 'fake', reason: expect.stringContaining('inside FakeTerm') })
    expect(await resolveBackend('fake', inputs)).toMatchObject({ backend: 'fake', reason: 'chosen with --backend' })
    const broken = { ...fakeBackend(), type: 'broken', label: 'Broken', probe: [process.execPath, '-e', 'process.exit(3)'] as [string, ...string[]] }
    const off = registerBackend(broken)
    try {
      await expect(resolveBackend('broken', inputs)).rejects.toThrow(/--backend broken, but .* does not work here/)
    } finally {
      off()
    }
  })

  it("a member on another machine says nothing of the team's backend; one here does", async () => {
    await createTeam({ name: 'spread', members: [{ name: 'far' }, { name: 'near' }] }, env)
    await updateMember('spread', 'far', { backendType: 'ssh', host: 'ci@build-box' }, env)
    expect(teamBackend(await readTeam('spread', env))).toBeUndefined()
    await updateMember('spread', 'near', { backendType: 'tmux' }, env)
    expect(teamBackend(await readTeam('spread', env))).toBe('tmux')
  })

  it('status and stop reach the members recorded on it, and its executor comes from the registry', async () => {
    unregister = registerBackend(fakeBackend())
    await createTeam({ name: 'crew', members: [{ name: 'alice' }] }, env)
    const executor = createExecutor('fake', { env })
    const spawned = await executor.spawn({ team: 'crew', name: 'alice', argv: ['true'], cwd: home })
    await updateMember('crew', 'alice', { backendType: spawned.backendType, tmuxPaneId: spawned.paneId }, env)
    expect(teamBackend(await readTeam('crew', env))).toBe('fake')

    const status = await teamStatus('crew', { env })
    expect(status.members.find((m) => m.name === 'alice')).toMatchObject({ state: 'alive' })

    const report = await stopTeamMembers('crew', { env, graceful: false })
    expect(report.killed).toContain('alice')
    expect(state().panes['alice@crew']).toBe('killed')
    expect(state().stopped).toEqual(['crew'])
  })
  it("a member's own pane is found on the backend named in its env, and what is pasted there is neutralised whatever the backend", async () => {
    unregister = registerBackend(fakeBackend())
    expect(ownPaneIo({ ...env, SWARM_BACKEND: 'fake' })).toBeUndefined() // in no pane of it
    const pane = ownPaneIo({ ...env, SWARM_BACKEND: 'fake', FAKE_PANE: 'p1', TMUX: '/tmp/other,1,0', TMUX_PANE: '%1' })!
    await pane.paste('/cmd \x1b[201~\x03 x\r\ny', { chars: 12, lines: 10 })
    await pane.keys(['Enter'])
    await expect(pane.keys(['Enter; rm'])).rejects.toThrow(UsageError)
    const typed = JSON.parse(fs.readFileSync(path.join(home, 'typed.json'), 'utf8'))
    expect(typed).toEqual({ p1: ['paste:/cmd ^[[201~', 'paste:^C x\ny', 'keys:Enter'] })
    expect(ownPaneIo({ ...env, SWARM_BACKEND: 'in-process' })).toBeUndefined()
  })
})
