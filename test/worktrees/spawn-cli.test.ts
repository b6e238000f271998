import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { GIT_ENV, branchExists, git, initRepo } from './git-repo.js'
import { waitFor } from '../support/wait.js'
import { hasTmux } from '../support/tmux.js'

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
    expect(del.stdout).toContain(`removed worktree ${clean} and branch swarm/crew/w`)
    expect(del.stdout).toContain(`kept worktree ${dirty} (branch swarm/crew/d): 1 uncommitted file (wip.txt)`)
    expect(del.stdout).toContain('swarm worktrees remove crew crew-d --discard')
    expect(fs.existsSync(clean)).toBe(false)
    expect(branchExists(sb.project, sb.env, 'swarm/crew/w')).toBe(false)
    expect(fs.readFileSync(path.join(dirty, 'wip.txt'), 'utf8')).toBe('wip\n')
    expect(git(sb.project, sb.env, 'worktree', 'list')).toContain(dirty)

    // The team is gone; its kept worktree is still listed, and goes only with --discard.
    const list = await sb.swarm(['worktrees', 'crew', '--json'])
    expect(list.code, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout).worktrees).toEqual([
      expect.objectContaining({
        name: 'd',
        path: dirty,
        branch: 'swarm/crew/d',
        clean: false,
        uncommitted: [{ status: '??', path: 'wip.txt' }],
        unmergedCount: 0,
        member: null,
      }),
    ])
    const keep = await sb.swarm(['worktrees', 'remove', 'crew', 'd'])
    expect(keep.code).toBe(4)
    expect(fs.existsSync(path.join(dirty, 'wip.txt'))).toBe(true)
    const gone = await sb.swarm(['worktrees', 'remove', 'crew', 'd', '--discard'])
    expect(gone.code, gone.stderr).toBe(0)
    expect(gone.stderr.trim()).toBe(`discarding ${dirty} (branch swarm/crew/d): 1 uncommitted file (wip.txt)`)
    expect(fs.existsSync(dirty)).toBe(false)
    expect(branchExists(sb.project, sb.env, 'swarm/crew/d')).toBe(false)
    expect((await sb.swarm(['worktrees', 'crew'])).stdout.trim()).toBe('team crew has no worktrees')
  })

  it('kill --remove takes the teammate off the roster and keeps its worktree when it committed work', async () => {
    expect((await sb.swarm(['team', 'create', 'rm', '--no-start'])).code).toBe(0)
    const r = await sb.swarm([
      'spawn',
      'rm',
      'c',
      '--worktree',
      'rm-work',
      '--backend',
      'tmux',
      '--command',
      "echo x > c.txt && git add c.txt && git commit -qm 'c work' && sleep 30",
    ])
    expect(r.code, r.stderr).toBe(0)
    const wt = path.join(sb.project, '.claude/worktrees/rm-work')
    await waitFor('c to commit', () => git(sb.project, sb.env, 'log', '--format=%s', 'swarm/rm/c').includes('c work'), 10_000)
    const k = await sb.swarm(['kill', 'rm', 'c', '--now', '--remove'])
    expect(k.code, k.stderr).toBe(0)
    expect(k.stdout).toContain('removed c from team rm')
    expect(k.stdout).toMatch(new RegExp(`kept worktree ${wt} \\(branch swarm/rm/c\\): 1 unmerged commit \\([0-9a-f]+ c work\\)`))
    const config = JSON.parse(fs.readFileSync(path.join(sb.env.SWARM_HOME!, 'teams/rm/config.json'), 'utf8'))
    expect(config.members.map((m: { name: string }) => m.name)).toEqual(['team-lead'])
    expect(fs.existsSync(path.join(wt, 'c.txt'))).toBe(true)
    const prune = await sb.swarm(['worktrees', 'prune', 'rm', '--json'])
    expect(JSON.parse(prune.stdout)).toMatchObject({ removed: [], kept: [expect.objectContaining({ path: wt, unmergedCount: 1 })] })
    const del = await sb.swarm(['team', 'delete', 'rm', '--discard', '--json'])
    expect(del.code, del.stderr).toBe(0)
    expect(del.stderr).toMatch(new RegExp(`discarding ${wt} \\(branch swarm/rm/c\\): 1 unmerged commit`))
    expect(JSON.parse(del.stdout).worktrees).toMatchObject({
      removed: [expect.objectContaining({ path: wt, branchDeleted: true })],
      discarded: [expect.objectContaining({ path: wt })],
    })
    expect(fs.existsSync(wt)).toBe(false)
    expect(branchExists(sb.project, sb.env, 'swarm/rm/c')).toBe(false)
  })

  it('team create --worktree refuses a dirty main checkout before writing anything (exit 4)', async () => {
    fs.writeFileSync(path.join(sb.project, 'README.md'), 'edited\n')
    try {
      const r = await sb.swarm(['team', 'create', 'dirty', '--agents', 'a,b', '--worktree', 'b', '--no-start'])
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(/^swarm: the checkout at .* has uncommitted changes \(README.md\)/)
      expect(fs.existsSync(path.join(sb.env.SWARM_HOME!, 'teams/dirty'))).toBe(false)
    } finally {
      git(sb.project, sb.env, 'checkout', '--', 'README.md')
    }
    const yaml = path.join(sb.root, 'team.yaml')
    fs.writeFileSync(yaml, 'worktree: true\nmembers:\n  - { name: x, worktree: "bad/slug" }\n')
    const bad = await sb.swarm(['team', 'create', 'spec', '--from', yaml, '--no-start'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('invalid worktree name "bad/slug"')
    expect(fs.existsSync(path.join(sb.env.SWARM_HOME!, 'teams/spec'))).toBe(false)
    fs.writeFileSync(yaml, 'worktree: true\nmembers:\n  - { name: x, worktree: x-tree }\n  - { name: y }\n  - { name: z, worktree: false }\n')
    const spec = await sb.swarm(['team', 'create', 'spec', '--from', yaml, '--no-start', '--json'])
    expect(spec.code, spec.stderr).toBe(0)
    expect(JSON.parse(spec.stdout).members.map((m: { worktree?: unknown }) => m.worktree)).toEqual([undefined, 'x-tree', true, false])

    const ok = await sb.swarm(['team', 'create', 'dirty', '--agents', 'a,b', '--worktree', 'b', '--no-start', '--json'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout).members.map((m: { name: string; worktree?: boolean }) => [m.name, m.worktree ?? false])).toEqual([
      ['team-lead', false],
      ['a', false],
      ['b', true],
    ])
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
