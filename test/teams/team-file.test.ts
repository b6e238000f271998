import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readTeam } from '../../src/teams/team-store.js'
import { assertBuilt, REPO, swarm, tempHome, type TempHome } from './helpers.js'

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
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain(file)
    expect(bad.stderr).toContain('members.0.mode')
    const badType = await swarm(home, ['team', 'create', 'x', '--agents', 'a', '--agent-type', 'b:NoSuchType', '--no-start'])
    expect(badType.exitCode).toBe(3) // an agent type that is not defined: not found
    expect(badType.stderr).toContain('NoSuchType')
    expect((await swarm(home, ['team', 'create', 'x', '--from', path.join(home.home, 'missing.yaml')])).exitCode).toBe(3)
    await expect(fs.access(path.join(home.home, 'teams', 'x'))).rejects.toThrow()
  })

  it('an unknown key is a usage error (exit 2) naming the key, and the right spelling when it only differs in case or _', async () => {
    const file = path.join(home.home, 'typo.yaml')
    await fs.writeFile(file, 'members:\n  - name: a\n    agent_type: Explore\n')
    const typo = await swarm(home, ['team', 'create', 'x', '--from', file, '--no-start'])
    expect(typo.exitCode).toBe(2)
    expect(typo.stderr.trim()).toBe(`swarm: ${file}: members.0: unknown key "agent_type": it is spelled agentType — rename agent_type to agentType`)
    await fs.writeFile(file, 'colour: red\nmembers: []\n')
    const unknown = await swarm(home, ['team', 'create', 'x', '--from', file, '--no-start'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('(top level): unknown key "colour"')
    expect(unknown.stderr).toContain('known keys: name, description')
    await fs.writeFile(file, 'backend: screen\n')
    expect((await swarm(home, ['team', 'create', 'x', '--from', file, '--no-start'])).exitCode).toBe(2)
    await fs.writeFile(file, 'members: [unclosed\n')
    const yaml = await swarm(home, ['team', 'create', 'x', '--from', file, '--no-start'])
    expect(yaml.exitCode).toBe(2)
    expect(yaml.stderr).toContain('not valid YAML')
    await expect(fs.access(path.join(home.home, 'teams', 'x'))).rejects.toThrow()
  })

  it('refuses team-lead as a teammate in --agents and in a team file (exit 2, one line), and writes nothing', async () => {
    const flag = await swarm(home, ['team', 'create', 'x', '--agents', 'alice,team-lead', '--no-start'])
    expect(flag.exitCode).toBe(2)
    expect(flag.stderr.trim()).toBe("swarm: team-lead is reserved for the team's lead; a teammate needs another name")
    const file = path.join(home.home, 'lead.yaml')
    await fs.writeFile(file, 'members:\n  - { name: team-lead, model: opus }\n')
    const fromFile = await swarm(home, ['team', 'create', 'x', '--from', file, '--no-start'])
    expect(fromFile.exitCode).toBe(2)
    expect(fromFile.stderr).toContain('team-lead is reserved')
    await expect(fs.access(path.join(home.home, 'teams', 'x'))).rejects.toThrow()
    expect((await swarm(home, ['team', 'create', 'x', '--agents', 'alice', '--no-start'])).exitCode).toBe(0)
    const spawned = await swarm(home, ['spawn', 'x', 'team-lead', '--backend', 'in-process'])
    expect(spawned.exitCode).toBe(2)
    expect(spawned.stderr).toContain('team-lead is reserved')
  })

  it("docs/team-files.md's examples are real: its team file creates its team, its batch file loads", async () => {
    const doc = await fs.readFile(path.join(REPO, 'docs/team-files.md'), 'utf8')
    const [teamYaml, batchYaml] = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1])
    const project = path.join(home.home, 'project')
    await fs.mkdir(project)
    // The implementer asks for a worktree: the project is a git repository with a commit.
    await execa('git', ['init', '-q', '-b', 'main'], { cwd: project, env: home.env })
    await execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'start'], { cwd: project, env: home.env })
    const file = path.join(home.home, 'team.yaml')
    await fs.writeFile(file, teamYaml)
    const r = await swarm(home, ['team', 'create', 'auth', '--from', file, '--no-start'])
    expect(r.exitCode, r.stderr).toBe(0)
    const team = await readTeam('auth', home.env)
    expect(team.members.map((m) => m.name)).toEqual(['team-lead', 'researcher', 'implementer', 'reviewer', 'critic'])
    expect(team.members.find((m) => m.name === 'implementer')).toMatchObject({ mode: 'acceptEdits', model: 'opus', maxCostUsd: 5 })
    const tasks = path.join(home.home, 'tasks.yaml')
    await fs.writeFile(tasks, batchYaml)
    const { loadBatchFile } = await import('../../src/batch/batch-file.js')
    expect((await loadBatchFile(tasks)).map((t) => t.name)).toEqual(['rename-login', 'rename-logout', 'tests-login', 'tests-logout', 'docs-auth'])
  })
})
