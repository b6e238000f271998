import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readTeam } from '../../src/teams/team-store.js'
import { assertBuilt, swarm, tempHome, type TempHome } from './helpers.js'

let home: TempHome
beforeEach(async () => {
  assertBuilt()
  home = await tempHome()
})
afterEach(async () => {
  await home.cleanup()
})

describe('swarm team create --from team.yaml / --agent-type', () => {
  it('takes members, types, models, modes and prompts from the file; --agent-type and --agents add to it', async () => {
    const project = path.join(home.home, 'project')
    await fs.mkdir(project)
    const file = path.join(home.home, 'team.yaml')
    await fs.writeFile(
      file,
      [
        'description: refactor the auth module',
        'cwd: project',
        'model: sonnet',
        'members:',
        '  - name: researcher',
        '    agentType: Explore',
        '    prompt: map every caller of login()',
        '  - { name: implementer, mode: acceptEdits, model: opus }',
      ].join('\n'),
    )
    const r = await swarm(home, [
      'team',
      'create',
      'auth',
      '--from',
      file,
      '--agents',
      'reviewer',
      '--agent-type',
      'reviewer:Verification',
      '--no-start',
    ])
    expect(r.exitCode, r.stderr).toBe(0)
    const team = await readTeam('auth', home.env)
    expect(team.description).toBe('refactor the auth module')
    const byName = Object.fromEntries(team.members.map((m) => [m.name, m]))
    expect(Object.keys(byName)).toEqual(['team-lead', 'researcher', 'implementer', 'reviewer'])
    expect(byName.researcher).toMatchObject({ agentType: 'Explore', model: 'sonnet', prompt: 'map every caller of login()', cwd: project })
    expect(byName.implementer).toMatchObject({ mode: 'acceptEdits', model: 'opus' })
    expect(byName.reviewer).toMatchObject({ agentType: 'Verification' })
  })

  it('refuses a bad file or flag with the file and field named, and writes nothing', async () => {
    const file = path.join(home.home, 'bad.yaml')
    await fs.writeFile(file, 'members:\n  - name: a\n    mode: yolo\n')
    const bad = await swarm(home, ['team', 'create', 'x', '--from', file, '--no-start'])
    expect(bad.exitCode).toBe(5)
    expect(bad.stderr).toContain(file)
    expect(bad.stderr).toContain('members.0.mode')
    const badType = await swarm(home, ['team', 'create', 'x', '--agents', 'a', '--agent-type', 'b:Explore', '--no-start'])
    expect(badType.exitCode).toBe(2)
    expect(badType.stderr).toContain('not in --agents')
    expect((await swarm(home, ['team', 'create', 'x', '--from', path.join(home.home, 'missing.yaml')])).exitCode).toBe(3)
    await expect(fs.access(path.join(home.home, 'teams', 'x'))).rejects.toThrow()
  })
})
