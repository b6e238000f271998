import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasTmux, sandbox, waitFor, type Sandbox } from '../e2e/helpers.js'
import { GIT_ENV, branchExists, git, initRepo } from './git-repo.js'

describe.skipIf(!hasTmux)('swarm spawn --worktree / team delete (real tmux, real git)', () => {
  let sb: Sandbox
  beforeAll(async () => {
    sb = sandbox({ ...GIT_ENV, GIT_CEILING_DIRECTORIES: '' })
    initRepo(sb.project, sb.env)
    const r = await sb.swarm(['team', 'create', 'crew', '--no-start'])
    expect(r.code, r.stderr).toBe(0)
  })
  afterAll(async () => {
    await sb?.cleanup()
  })

  it('runs the teammate in its own worktree; delete removes the clean one and keeps (and reports) the dirty one', async () => {
    const out = path.join(sb.root, 'where.txt')
    const r = await sb.swarm(['spawn', 'crew', 'w', '--worktree', '--backend', 'tmux', '--command', `pwd > '${out}'; sleep 30`, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const clean = path.join(sb.project, '.claude/worktrees/crew-w')
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'w', cwd: clean, worktreePath: clean, branch: 'swarm/crew/w' })
    expect(await waitFor('w to start', () => fs.existsSync(out) && fs.readFileSync(out, 'utf8').trim(), 10_000)).toBe(clean)

    const d = await sb.swarm(['spawn', 'crew', 'd', '--worktree', '--backend', 'tmux', '--command', 'echo wip > wip.txt; sleep 30'])
    expect(d.code, d.stderr).toBe(0)
    const dirty = path.join(sb.project, '.claude/worktrees/crew-d')
    expect(d.stdout).toContain(`in worktree ${dirty} (branch swarm/crew/d)`)
    await waitFor('d to write', () => fs.existsSync(path.join(dirty, 'wip.txt')), 10_000)
    const config = JSON.parse(fs.readFileSync(path.join(sb.env.SWARM_HOME!, 'teams/crew/config.json'), 'utf8'))
    expect(config.members.find((m: { name: string }) => m.name === 'd')).toMatchObject({ cwd: dirty, worktreePath: dirty })

    const del = await sb.swarm(['team', 'delete', 'crew', '--force'])
    expect(del.code, del.stderr).toBe(0)
    expect(del.stdout).toContain(`kept worktree ${dirty}: it has uncommitted changes`)
    expect(fs.existsSync(clean)).toBe(false)
    expect(branchExists(sb.project, sb.env, 'swarm/crew/w')).toBe(false)
    expect(fs.readFileSync(path.join(dirty, 'wip.txt'), 'utf8')).toBe('wip\n')
    expect(git(sb.project, sb.env, 'worktree', 'list')).toContain(dirty)
  })

  it('refuses --worktree outside a git repository (exit 2) without registering the teammate', async () => {
    const r0 = await sb.swarm(['team', 'create', 'solo', '--no-start'])
    expect(r0.code, r0.stderr).toBe(0)
    const plain = path.join(sb.root, 'plain')
    fs.mkdirSync(plain)
    const r = await sb.swarm(['spawn', 'solo', 'x', '--worktree', '--backend', 'tmux', '--cwd', plain, '--command', 'sleep 30'], {
      env: { ...sb.env, GIT_CEILING_DIRECTORIES: sb.root },
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^swarm: ${plain} is not inside a git repository.* — .*without --worktree`))
    const config = JSON.parse(fs.readFileSync(path.join(sb.env.SWARM_HOME!, 'teams/solo/config.json'), 'utf8'))
    expect(config.members.map((m: { name: string }) => m.name)).toEqual(['team-lead'])
  })
})
