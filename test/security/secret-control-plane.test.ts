import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { leadKeyPath } from '../../src/trust/keys.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { tasksDir, teamDir } from '../../src/home/paths.js'
import { TEAM, nudge, startInProcess, toolResult, type Fixture, type InProcessAgent, makeFixture } from '../permissions/requests/bubbling-helpers.js'
import { useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'

/**
 * Finding 2 and its variants: a scripted teammate, in every permission mode, tries to read or list
 * swarm's control plane through its own file tools — from $HOME, through symlinks, `..`, another
 * letter case, an absolute glob — and to write into it. Nothing of it reaches the model.
 */

const MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'bubble'] as const
const PEM = 'BEGIN PRIVATE KEY'

let loopback: LoopbackServer
let fx: Fixture
let agent: InProcessAgent | undefined
let base: string

useAgentTeam({
  team: makeFixture,
  onReady: async (t) => {
    ;({ loopback, fx } = t)
    // $HOME is the directory above the state root (SWARM_HOME = <base>/home), as ~ is above ~/.claude.
    base = path.dirname(fx.home)
    fx.env.HOME = base
    await fs.symlink(leadKeyPath(TEAM, fx.env), path.join(fx.cwd, 'link-to-key'))
    await fs.symlink(path.join(fx.home, 'teams'), path.join(fx.cwd, 'link-to-teams'))
    await fs.writeFile(path.join(fx.cwd, 'notes.txt'), 'nothing secret here\n')
    await fs.mkdir(tasksDir(TEAM, fx.env), { recursive: true })
    await fs.writeFile(path.join(tasksDir(TEAM, fx.env), '1.json'), '{"id":"1","subject":"PRIVATE task"}')
  },
})

/** The attacks: [id, tool, input, kind] — `search` must run and leave the control plane out; `refused` must fail. */
function attacks(): Array<[string, string, Record<string, unknown>, 'search' | 'refused']> {
  const home = fx.home
  return [
    ['grep-home', 'Grep', { pattern: 'PRIVATE', path: '~', output_mode: 'content' }, 'search'],
    ['grep-home-files', 'Grep', { pattern: 'PRIVATE', path: base }, 'search'],
    ['glob-home', 'Glob', { pattern: '**/lead.key', path: '~' }, 'search'],
    ['glob-root', 'Glob', { pattern: '**/*', path: home }, 'search'],
    ['grep-cwd-link', 'Grep', { pattern: 'PRIVATE', output_mode: 'content' }, 'search'],
    ['read-key', 'Read', { file_path: leadKeyPath(TEAM, fx.env) }, 'refused'],
    ['read-key-link', 'Read', { file_path: 'link-to-key' }, 'refused'],
    ['read-config-dotdot', 'Read', { file_path: '../home/teams/crew/config.json' }, 'refused'],
    ['read-key-case', 'Read', { file_path: path.join(home, 'TEAMS', TEAM, 'LEAD.KEY') }, 'refused'],
    ['grep-teams-link', 'Grep', { pattern: 'PRIVATE', path: 'link-to-teams' }, 'refused'],
    ['grep-task', 'Grep', { pattern: 'PRIVATE', path: path.join(tasksDir(TEAM, fx.env), '1.json') }, 'refused'],
    ['glob-absolute', 'Glob', { pattern: path.join(home, 'teams', '*', 'lead.key') }, 'refused'],
    ['glob-inside', 'Glob', { pattern: '*', path: teamDir(TEAM, fx.env) }, 'refused'],
    ['write-task', 'Write', { file_path: path.join(tasksDir(TEAM, fx.env), '2.json'), content: '{}' }, 'refused'],
    ['edit-config', 'Edit', { file_path: path.join(teamDir(TEAM, fx.env), 'config.json'), old_string: 'alice', new_string: 'mallory' }, 'refused'],
  ]
}

describe('the control plane is secret from every teammate file tool', () => {
  for (const mode of MODES) {
    it(`${mode}: no search, read or write reaches teams/ or tasks/; searches rooted above say what they skipped`, async () => {
      const list = attacks()
      loopback.setScenario({
        agents: {
          alice: [{ content: list.map(([id, name, input]) => ({ type: 'tool_use', id, name, input })) }, { text: 'done' }],
        },
      })
      const configBefore = await fs.readFile(path.join(teamDir(TEAM, fx.env), 'config.json'), 'utf8')
      agent = await startInProcess(fx, { mode })
      await nudge(fx)
      await waitFor('every tool result', () => list.every(([id]) => toolResult(loopback, id) !== undefined), 15_000, { output: agent.pane })
      await waitFor('alice idle', async () => (await readMemberState(TEAM, 'alice', fx.env))?.status === 'idle', 10_000, { output: agent.pane })

      for (const [id, , , kind] of list) {
        const r = toolResult(loopback, id)!
        expect(r.content, id).not.toContain(PEM)
        if (kind === 'refused') {
          expect(r.isError, `${id}: ${r.content}`).toBe(true)
          continue
        }
        expect(r.isError, `${id}: ${r.content}`).toBe(false)
        // No listed path, no matching line lies in the control plane.
        expect(r.content, id).not.toMatch(/\/(teams|tasks)\//)
      }
      expect(toolResult(loopback, 'grep-home')!.content).toMatch(/skipped \d+ entr(y|ies) under the swarm control plane/)
      expect(toolResult(loopback, 'glob-home')!.content).toMatch(/skipped \d+ entr(y|ies) under the swarm control plane/)
      expect(toolResult(loopback, 'glob-root')!.content).toMatch(/skipped 2 entries under the swarm control plane/)
      expect(toolResult(loopback, 'grep-cwd-link')!.content).toMatch(/skipped 1 entry under the swarm control plane/)
      // Nothing of the key travelled to the model API, in any request.
      expect(JSON.stringify(loopback.requests.map((r) => r.body))).not.toContain(PEM)
      // And nothing was written.
      expect(await fs.readFile(path.join(teamDir(TEAM, fx.env), 'config.json'), 'utf8')).toBe(configBefore)
      await expect(fs.stat(path.join(tasksDir(TEAM, fx.env), '2.json'))).rejects.toThrow()
    })
  }

  it('a search of a tree with no control plane in it says nothing about skipping', async () => {
    loopback.setScenario({
      agents: {
        alice: [{ content: [{ type: 'tool_use', id: 'plain', name: 'Grep', input: { pattern: 'secret', path: 'notes.txt' } }] }, { text: 'ok' }],
      },
    })
    agent = await startInProcess(fx, { mode: 'default' })
    await nudge(fx)
    await waitFor('the grep result', () => toolResult(loopback, 'plain'), 10_000, { output: agent.pane })
    expect(toolResult(loopback, 'plain')!.content).not.toContain('skipped')
    expect(toolResult(loopback, 'plain')!.content).toContain('notes.txt')
  })
})
