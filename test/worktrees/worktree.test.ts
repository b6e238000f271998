import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { InvalidNameError } from '../../src/errors.js'
import { readWorktreeRecords } from '../../src/worktrees/record.js'
import { validateSlug } from '../../src/worktrees/slug.js'
import { createWorktree, planWorktree, removeWorktree, worktreeCwd } from '../../src/worktrees/worktree.js'
import { GIT_ENV, branchExists, commitFile, commitFiles, git, initRepo } from './git-repo.js'
import { isolatedEnv, useTempDir } from '../support/home.js'

let base: string
let repo: string
let env: NodeJS.ProcessEnv
let head: string

useTempDir('swarm-wt-', (d) => {
  base = d
  repo = path.join(base, 'repo')
  env = isolatedEnv(base, { ...GIT_ENV, CLAUDE_CONFIG_DIR: '' })
  head = initRepo(repo, env)
})

describe('validateSlug', () => {
  it('takes up to 64 of [A-Za-z0-9._-]', () => {
    expect(validateSlug('crew-alice_2.v1')).toBe('crew-alice_2.v1')
    expect(validateSlug('a'.repeat(64))).toBe('a'.repeat(64))
  })
  it.each([
    ['', 'empty'],
    ['a'.repeat(65), 'longer than 64'],
    ['a..b', '".."'],
    ['..', '".."'],
    ['/etc', 'a path'],
    ['x/y', 'a path'],
    ['sp ace', 'only A-Z'],
    ['semi;colon', 'only A-Z'],
    ['$(rm)', 'only A-Z'],
    ['é', 'only A-Z'],
    ['.hidden', 'starts with'],
    ['-rf', 'starts with'],
  ])('refuses %j (%s) with exit 2', (slug, why) => {
    let err: unknown
    try {
      validateSlug(slug)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(InvalidNameError)
    expect(err).toMatchObject({ exitCode: 2, message: expect.stringContaining(why) })
  })
})

describe('createWorktree', () => {
  it('checks out HEAD on swarm/<team>/<name> under <top>/.claude/worktrees/<team>-<name>, found from a subdirectory, and records it', async () => {
    fs.mkdirSync(path.join(repo, 'src'))
    commitFile(repo, env, 'src/index.ts', 'src', 'export {}\n')
    head = git(repo, env, 'rev-parse', 'HEAD').trim()
    const wt = await createWorktree({ repoDir: path.join(repo, 'src'), team: 'crew', name: 'alice', env })
    const wtPath = path.join(repo, '.claude/worktrees/crew-alice')
    expect(wt).toMatchObject({
      path: wtPath,
      branch: 'swarm/crew/alice',
      baseRef: head,
      reused: false,
      repo,
      slug: 'crew-alice',
      team: 'crew',
      name: 'alice',
      links: [],
      subdir: 'src',
    })
    // The teammate starts in the worktree's copy of the directory the lead was in.
    expect(await worktreeCwd(wt)).toBe(path.join(wtPath, 'src'))
    expect(fs.readFileSync(path.join(wt.path, 'README.md'), 'utf8')).toBe('hello\n')
    expect(git(wt.path, env, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('swarm/crew/alice')
    // The nested worktree does not show up as untracked in the main tree.
    expect(git(repo, env, 'status', '--porcelain')).toBe('')
    const { records } = await readWorktreeRecords('crew', env)
    expect(records).toEqual([expect.objectContaining({ path: wtPath, branch: 'swarm/crew/alice', baseRef: head, repo })])
  })

  it('takes a worktree name of its own, validated before git runs', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', slug: 'auth-fix', env })
    expect(wt.path).toBe(path.join(repo, '.claude/worktrees/auth-fix'))
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'bob', slug: '../../escape', env })).rejects.toBeInstanceOf(InvalidNameError)
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'bob', slug: path.join(base, 'abs'), env })).rejects.toBeInstanceOf(
      InvalidNameError,
    )
    expect(fs.existsSync(path.join(base, 'abs'))).toBe(false)
    expect(branchExists(repo, env, 'swarm/crew/bob')).toBe(false)
  })

  it('reuses its own worktree at the same path on the same branch', async () => {
    const first = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(first.path, 'wip.txt'), 'wip\n')
    expect(await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })).toMatchObject({ path: first.path, reused: true, baseRef: head })
    expect(fs.readFileSync(path.join(first.path, 'wip.txt'), 'utf8')).toBe('wip\n')
  })

  it('made from inside a worktree, puts the new one beside it, not inside it', async () => {
    const alice = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    const bob = await createWorktree({ repoDir: alice.path, team: 'crew', name: 'bob', env })
    expect(bob.path).toBe(path.join(repo, '.claude/worktrees/crew-bob'))
  })

  it('links an ignored node_modules into the worktree without touching the main copy; never shows or commits the link', async () => {
    fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n')
    commitFiles(repo, env, ['.gitignore'])
    fs.mkdirSync(path.join(repo, 'node_modules/left-pad'), { recursive: true })
    fs.writeFileSync(path.join(repo, 'node_modules/left-pad/index.js'), 'module.exports = 1\n')
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(wt.links).toEqual(['node_modules'])
    expect(fs.lstatSync(path.join(wt.path, 'node_modules')).isSymbolicLink()).toBe(true)
    expect(fs.readFileSync(path.join(wt.path, 'node_modules/left-pad/index.js'), 'utf8')).toBe('module.exports = 1\n')
    expect(git(wt.path, env, 'status', '--porcelain')).toBe('')
    git(wt.path, env, 'add', '-A')
    expect(git(wt.path, env, 'diff', '--cached', '--name-only')).toBe('')
    expect(git(repo, env, 'status', '--porcelain')).toBe('')

    expect(await removeWorktree(wt, { env })).toMatchObject({ removed: true, branchDeleted: true })
    expect(fs.readFileSync(path.join(repo, 'node_modules/left-pad/index.js'), 'utf8')).toBe('module.exports = 1\n')
  })

  it('links only ignored directories, as worktree.symlinkDirectories in the project settings says', async () => {
    fs.writeFileSync(path.join(repo, '.gitignore'), 'vendor/\nnode_modules/\n')
    fs.mkdirSync(path.join(repo, '.claude'), { recursive: true })
    fs.writeFileSync(
      path.join(repo, '.claude/settings.json'),
      JSON.stringify({ worktree: { symlinkDirectories: ['vendor', 'lib', '../outside', '/abs'] } }),
    )
    fs.mkdirSync(path.join(repo, 'lib'))
    fs.writeFileSync(path.join(repo, 'lib/a.js'), 'tracked\n')
    commitFiles(repo, env, ['.gitignore', '.claude/settings.json', 'lib/a.js'])
    for (const d of ['vendor', 'node_modules']) fs.mkdirSync(path.join(repo, d))
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(wt.links).toEqual(['vendor'])
    expect(fs.lstatSync(path.join(wt.path, 'lib')).isSymbolicLink()).toBe(false)
    expect(fs.existsSync(path.join(wt.path, 'node_modules'))).toBe(false)
  })
})

describe('createWorktree refuses, leaving nothing behind', () => {
  it('a directory that is not in a git repository (exit 2, with a hint)', async () => {
    const plain = path.join(base, 'plain')
    fs.mkdirSync(plain)
    await expect(
      createWorktree({ repoDir: plain, team: 'crew', name: 'alice', env: { ...env, GIT_CEILING_DIRECTORIES: base } }),
    ).rejects.toMatchObject({
      code: 'SWARM_NOT_A_GIT_REPO',
      exitCode: 2,
      message: expect.stringContaining(`${plain} is not inside a git repository`),
      hint: expect.stringContaining('--worktree'),
    })
  })

  it('git missing (exit 2)', async () => {
    await expect(
      createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env: { ...env, PATH: path.join(base, 'empty-bin') } }),
    ).rejects.toMatchObject({
      code: 'SWARM_GIT_MISSING',
      exitCode: 2,
      message: 'git is not installed (or not on PATH)',
    })
  })

  it('a main checkout with uncommitted changes to tracked files (exit 4, naming them)', async () => {
    fs.writeFileSync(path.join(repo, 'README.md'), 'edited\n')
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })).rejects.toMatchObject({
      code: 'SWARM_MAIN_DIRTY',
      exitCode: 4,
      message: expect.stringContaining('uncommitted changes (README.md)'),
    })
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(false)
    expect(fs.existsSync(path.join(repo, '.claude/worktrees/crew-alice'))).toBe(false)
  })

  it('a branch of that name that exists already (exit 4)', async () => {
    git(repo, env, 'branch', 'swarm/crew/alice')
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })).rejects.toMatchObject({
      code: 'SWARM_BRANCH_EXISTS',
      exitCode: 4,
      message: expect.stringContaining('branch swarm/crew/alice exists already'),
    })
    expect(fs.existsSync(path.join(repo, '.claude/worktrees/crew-alice'))).toBe(false)
  })

  it('a repository with no commit, invalid names, and a path taken by a plain directory or another worktree', async () => {
    const empty = path.join(base, 'empty')
    fs.mkdirSync(empty)
    git(empty, env, 'init', '-q')
    await expect(createWorktree({ repoDir: empty, team: 'crew', name: 'alice', env })).rejects.toMatchObject({
      code: 'SWARM_GIT_NO_COMMIT',
      exitCode: 2,
    })
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: '../escape', env })).rejects.toBeInstanceOf(InvalidNameError)
    await expect(createWorktree({ repoDir: repo, team: '.x', name: 'alice', env })).rejects.toBeInstanceOf(InvalidNameError)
    fs.mkdirSync(path.join(repo, '.claude/worktrees/crew-carol'), { recursive: true })
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'carol', env })).rejects.toMatchObject({
      code: 'SWARM_WORKTREE_PATH_TAKEN',
      exitCode: 4,
    })
    await createWorktree({ repoDir: repo, team: 'crew', name: 'dave', slug: 'shared', env })
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'erin', slug: 'shared', env })).rejects.toMatchObject({
      code: 'SWARM_WORKTREE_PATH_TAKEN',
      message: expect.stringContaining('branch swarm/crew/dave'),
    })
    expect(branchExists(repo, env, 'swarm/crew/erin')).toBe(false)
  })

  it('when git fails half-way, takes away the branch it made', async () => {
    fs.mkdirSync(path.join(repo, '.claude'))
    fs.writeFileSync(path.join(repo, '.claude/worktrees'), 'a file where the directory should be\n')
    const err = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env }).catch((e: Error) => e)
    expect(err).toMatchObject({ code: 'SWARM_GIT_FAILED', message: expect.stringMatching(/worktree add failed in .*: fatal: /) })
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(false)
    expect(git(repo, env, 'worktree', 'list', '--porcelain')).not.toContain('crew-alice')
    expect((await readWorktreeRecords('crew', env)).records).toEqual([])
    expect(fs.readFileSync(path.join(repo, '.claude/worktrees'), 'utf8')).toBe('a file where the directory should be\n')
  })

  it('two spawns racing for one worktree name: one gets it, the other takes away only its own branch', async () => {
    const [a, b] = await Promise.allSettled([
      createWorktree({ repoDir: repo, team: 'crew', name: 'alice', slug: 'same', env }),
      createWorktree({ repoDir: repo, team: 'crew', name: 'bob', slug: 'same', env }),
    ])
    const won = [a, b].filter((r) => r.status === 'fulfilled')
    expect(won).toHaveLength(1)
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof createWorktree>>>).value
    const loser = winner.name === 'alice' ? 'bob' : 'alice'
    expect(fs.existsSync(path.join(winner.path, 'README.md'))).toBe(true)
    expect(branchExists(repo, env, winner.branch)).toBe(true)
    expect(branchExists(repo, env, `swarm/crew/${loser}`)).toBe(false)
  })

  it('made from a linked checkout (the lead works on a feature branch there): starts from ITS HEAD, placed beside the main tree', async () => {
    const feature = path.join(base, 'feature')
    git(repo, env, 'worktree', 'add', '-q', '-b', 'feature', feature)
    commitFile(feature, env, 'f.txt', 'feature work', 'f\n')
    const wt = await createWorktree({ repoDir: feature, team: 'crew', name: 'alice', env })
    expect(wt.path).toBe(path.join(repo, '.claude/worktrees/crew-alice'))
    expect(fs.readFileSync(path.join(wt.path, 'f.txt'), 'utf8')).toBe('f\n')
    fs.writeFileSync(path.join(feature, 'f.txt'), 'dirty\n')
    await expect(createWorktree({ repoDir: feature, team: 'crew', name: 'bob', env })).rejects.toMatchObject({
      code: 'SWARM_MAIN_DIRTY',
      message: expect.stringContaining(feature),
    })
  })

  it('planWorktree checks all of this and changes nothing', async () => {
    const plan = await planWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(plan).toEqual({
      team: 'crew',
      name: 'alice',
      slug: 'crew-alice',
      repo,
      path: path.join(repo, '.claude/worktrees/crew-alice'),
      branch: 'swarm/crew/alice',
      head,
      subdir: '',
    })
    expect(fs.existsSync(path.join(repo, '.claude'))).toBe(false)
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(false)
  })
})

describe('removeWorktree', () => {
  it('removes a clean worktree with its branch and its record', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(await removeWorktree(wt, { env })).toMatchObject({ removed: true, branchDeleted: true, discarded: false, contents: { clean: true } })
    expect(fs.existsSync(wt.path)).toBe(false)
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(false)
    expect((await readWorktreeRecords('crew', env)).records).toEqual([])
  })

  it('keeps a dirty worktree and says what is in it; discard names it, then removes it', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(wt.path, 'README.md'), 'changed\n')
    fs.writeFileSync(path.join(wt.path, 'new.txt'), 'new\n')
    const kept = await removeWorktree(wt, { env })
    expect(kept).toMatchObject({ removed: false, contents: { clean: false, uncommitted: [' M README.md', '?? new.txt'], unmergedCount: 0 } })
    expect(kept.reason).toBe(`${wt.path} (branch swarm/crew/alice) has 2 uncommitted files (README.md, new.txt)`)
    expect(fs.readFileSync(path.join(wt.path, 'new.txt'), 'utf8')).toBe('new\n')
    const named: string[][] = []
    expect(await removeWorktree(wt, { env, discard: true, onDiscard: (t, c) => named.push([t.path, ...c.uncommitted]) })).toMatchObject({
      removed: true,
      branchDeleted: true,
      discarded: true,
    })
    expect(named).toEqual([[wt.path, ' M README.md', '?? new.txt']])
    expect(fs.existsSync(wt.path)).toBe(false)
  })

  it('keeps a worktree whose branch has commits beyond its base, and reports them', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(wt.path, 'work.txt'), 'done\n')
    commitFile(wt.path, env, 'work.txt', 'the work')
    const r = await removeWorktree(wt, { env })
    expect(r).toMatchObject({ removed: false, contents: { clean: false, uncommitted: [], unmergedCount: 1, unmerged: [{ subject: 'the work' }] } })
    expect(r.reason).toMatch(/has 1 unmerged commit \([0-9a-f]+ the work\)$/)
    expect(fs.existsSync(path.join(wt.path, 'work.txt'))).toBe(true)
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(true)
    expect((await readWorktreeRecords('crew', env)).records).toHaveLength(1)
  })

  it('once its commits are merged into the main branch, removes it with its branch', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(wt.path, 'work.txt'), 'done\n')
    commitFile(wt.path, env, 'work.txt', 'the work')
    git(repo, env, 'merge', '-q', '--no-edit', 'swarm/crew/alice')
    expect(await removeWorktree(wt, { env })).toMatchObject({ removed: true, branchDeleted: true, discarded: false })
    expect(fs.readFileSync(path.join(repo, 'work.txt'), 'utf8')).toBe('done\n')
  })

  it('with its directory deleted by hand: prunes it, and keeps an unmerged branch', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    commitFile(wt.path, env, 'README.md', 'touch', 'more\n')
    fs.rmSync(wt.path, { recursive: true })
    expect(await removeWorktree(wt, { env })).toMatchObject({ removed: false, contents: { exists: false, branchExists: true, unmergedCount: 1 } })
    expect(await removeWorktree(wt, { env, discard: true })).toMatchObject({ removed: true, branchDeleted: true })
    expect(git(repo, env, 'worktree', 'list')).not.toContain('crew-alice')
  })

  it('says which ignored files go with a clean worktree, and which branch it had checked out (kept)', async () => {
    fs.writeFileSync(path.join(repo, '.gitignore'), '*.log\n')
    commitFiles(repo, env, ['.gitignore'])
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(wt.path, 'debug.log'), 'noise\n')
    git(wt.path, env, 'checkout', '-q', '-b', 'fix')
    commitFile(wt.path, env, 'fix.txt', 'fix it', 'x\n')
    const r = await removeWorktree(wt, { env })
    expect(r).toMatchObject({ removed: true, branchDeleted: true, contents: { clean: true, ignored: ['debug.log'], otherBranch: 'fix' } })
    expect(git(repo, env, 'show', 'fix:fix.txt')).toBe('x\n')
  })

  it('keeps commits made on a detached HEAD in a worktree whose directory was deleted by hand', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    git(wt.path, env, 'checkout', '-q', '--detach')
    commitFile(wt.path, env, 'lost.txt', 'detached work', 'y\n')
    fs.rmSync(wt.path, { recursive: true })
    expect(await removeWorktree(wt, { env })).toMatchObject({
      removed: false,
      contents: { exists: false, unmergedCount: 1, unmerged: [{ subject: 'detached work' }] },
    })
  })

  it('never deletes a branch checked out in another worktree', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    git(wt.path, env, 'checkout', '-q', '--detach')
    const other = path.join(base, 'other')
    git(repo, env, 'worktree', 'add', '-q', other, 'swarm/crew/alice')
    const r = await removeWorktree(wt, { env })
    expect(r).toMatchObject({ removed: true, branchDeleted: false, reason: `kept branch swarm/crew/alice: it is checked out in ${other}` })
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(true)
  })

  it('a worktree whose repository is gone is kept (and reported) until --discard', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.renameSync(repo, path.join(base, 'moved'))
    expect(await removeWorktree(wt, { env })).toMatchObject({ removed: false, reason: expect.stringContaining('its repository is gone') })
    expect((await readWorktreeRecords('crew', env)).records).toHaveLength(1)
    expect(await removeWorktree(wt, { env, discard: true })).toMatchObject({ removed: true, discarded: true })
    expect((await readWorktreeRecords('crew', env)).records).toEqual([])
  })

  it('never removes the main working tree', async () => {
    await expect(removeWorktree({ repo, path: repo, branch: 'main' }, { env, discard: true })).rejects.toMatchObject({ code: 'SWARM_MAIN_WORKTREE' })
    expect(fs.existsSync(path.join(repo, 'README.md'))).toBe(true)
  })
})

it('two teammates in worktrees edit the same file without conflict; the main checkout is untouched', async () => {
  const alice = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
  const bob = await createWorktree({ repoDir: repo, team: 'crew', name: 'bob', env })
  commitFile(alice.path, env, 'README.md', 'alice', 'hello from alice\n')
  commitFile(bob.path, env, 'README.md', 'bob', 'hello from bob\n')
  expect(fs.readFileSync(path.join(alice.path, 'README.md'), 'utf8')).toBe('hello from alice\n')
  expect(fs.readFileSync(path.join(bob.path, 'README.md'), 'utf8')).toBe('hello from bob\n')
  expect(fs.readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('hello\n')
  expect(git(repo, env, 'status', '--porcelain')).toBe('')
  expect(git(repo, env, 'show', 'swarm/crew/alice:README.md')).toBe('hello from alice\n')
  expect(git(repo, env, 'show', 'swarm/crew/bob:README.md')).toBe('hello from bob\n')
})
