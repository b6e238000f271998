import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runTool, type AnyTool } from '../../src/agent/tool.js'
import { createLeadTools, type LeadHost } from '../../src/agent/tools/lead.js'
import { InvalidNameError } from '../../src/errors.js'
import { createWorktree, removeWorktree } from '../../src/worktrees/worktree.js'
import { GIT_ENV, branchExists, git, initRepo } from './git-repo.js'

let base: string
let repo: string
let env: NodeJS.ProcessEnv
let head: string

beforeEach(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-wt-')))
  repo = path.join(base, 'repo')
  env = { ...process.env, ...GIT_ENV, SWARM_HOME: path.join(base, 'home'), CLAUDE_CONFIG_DIR: '' }
  head = initRepo(repo, env)
})
afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
})

describe('createWorktree', () => {
  it('checks out HEAD on swarm/<team>/<name> under <top>/.claude/worktrees, found from a subdirectory', async () => {
    fs.mkdirSync(path.join(repo, 'src'))
    const wt = await createWorktree({ repoDir: path.join(repo, 'src'), team: 'crew', name: 'alice', env })
    expect(wt).toEqual({ path: path.join(repo, '.claude/worktrees/crew-alice'), branch: 'swarm/crew/alice', baseRef: head, reused: false })
    expect(fs.readFileSync(path.join(wt.path, 'README.md'), 'utf8')).toBe('hello\n')
    expect(git(wt.path, env, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('swarm/crew/alice')
    expect(git(repo, env, 'worktree', 'list')).toContain(wt.path)
    // The nested worktree does not show up as untracked in the main tree.
    expect(git(repo, env, 'status', '--porcelain')).toBe('')
  })

  it('reuses a registered worktree, and an existing branch (with its commits) once the worktree is gone', async () => {
    const first = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })).toMatchObject({ path: first.path, reused: true })
    fs.writeFileSync(path.join(first.path, 'work.txt'), 'done\n')
    git(first.path, env, 'add', 'work.txt')
    git(first.path, env, 'commit', '-q', '-m', 'work')
    expect(await removeWorktree(first.path, { env })).toMatchObject({ removed: true, branchDeleted: false })
    const again = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(again).toMatchObject({ path: first.path, branch: 'swarm/crew/alice', reused: false })
    expect(fs.readFileSync(path.join(again.path, 'work.txt'), 'utf8')).toBe('done\n')
  })

  it('made from inside a worktree, puts the new one beside it, not inside it', async () => {
    const alice = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    const bob = await createWorktree({ repoDir: alice.path, team: 'crew', name: 'bob', env })
    expect(bob.path).toBe(path.join(repo, '.claude/worktrees/crew-bob'))
  })

  it('refuses a directory that is not in a git repository (exit 2, with a hint)', async () => {
    const plain = path.join(base, 'plain')
    fs.mkdirSync(plain)
    await expect(createWorktree({ repoDir: plain, team: 'crew', name: 'alice', env: { ...env, GIT_CEILING_DIRECTORIES: base } })).rejects.toMatchObject({
      code: 'SWARM_NOT_A_GIT_REPO',
      exitCode: 2,
      message: expect.stringContaining(`${plain} is not inside a git repository`),
      hint: expect.stringContaining('--worktree'),
    })
  })

  it('validates names before building a path, and refuses a path taken by a plain directory', async () => {
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: '../escape', env })).rejects.toBeInstanceOf(InvalidNameError)
    await expect(createWorktree({ repoDir: repo, team: '.x', name: 'alice', env })).rejects.toBeInstanceOf(InvalidNameError)
    fs.mkdirSync(path.join(repo, '.claude/worktrees/crew-carol'), { recursive: true })
    await expect(createWorktree({ repoDir: repo, team: 'crew', name: 'carol', env })).rejects.toMatchObject({ code: 'SWARM_WORKTREE_PATH_TAKEN', exitCode: 4 })
  })
})

describe('removeWorktree', () => {
  it('removes a clean worktree and its merged branch', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    expect(await removeWorktree(wt.path, { env })).toEqual({ removed: true, branch: 'swarm/crew/alice', branchDeleted: true })
    expect(fs.existsSync(wt.path)).toBe(false)
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(false)
  })

  it('keeps a dirty worktree and says so; force removes it', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(wt.path, 'README.md'), 'changed\n')
    fs.writeFileSync(path.join(wt.path, 'new.txt'), 'new\n')
    expect(await removeWorktree(wt.path, { env })).toEqual({ removed: false, reason: `${wt.path} has uncommitted changes`, branch: 'swarm/crew/alice' })
    expect(fs.readFileSync(path.join(wt.path, 'new.txt'), 'utf8')).toBe('new\n')
    expect(await removeWorktree(wt.path, { env, force: true })).toMatchObject({ removed: true, branchDeleted: true })
    expect(fs.existsSync(wt.path)).toBe(false)
  })

  it('keeps a branch with unmerged commits and reports it', async () => {
    const wt = await createWorktree({ repoDir: repo, team: 'crew', name: 'alice', env })
    fs.writeFileSync(path.join(wt.path, 'work.txt'), 'done\n')
    git(wt.path, env, 'add', 'work.txt')
    git(wt.path, env, 'commit', '-q', '-m', 'work')
    expect(await removeWorktree(wt.path, { env })).toEqual({
      removed: true,
      branch: 'swarm/crew/alice',
      branchDeleted: false,
      reason: 'branch swarm/crew/alice has commits that are not merged; kept it',
    })
    expect(fs.existsSync(wt.path)).toBe(false)
    expect(branchExists(repo, env, 'swarm/crew/alice')).toBe(true)
  })

  it('never removes the main working tree', async () => {
    expect(await removeWorktree(repo, { env, force: true })).toMatchObject({ removed: false, reason: expect.stringContaining('main working tree') })
    expect(fs.existsSync(path.join(repo, 'README.md'))).toBe(true)
  })
})

describe("the lead's Agent tool with isolation: worktree (one-off subagent)", () => {
  /** A host whose subagent runs `work` in the cwd it is given. */
  function agentTool(work: (cwd: string) => void): { tool: AnyTool; cwds: string[] } {
    const cwds: string[] = []
    const host: LeadHost = {
      spawnTeammate: async () => 'unused',
      stopTeammate: async () => 'unused',
      runSubagent: async (input) => {
        cwds.push(input.cwd!)
        work(input.cwd!)
        return 'REPORT'
      },
    }
    return { tool: createLeadTools(host).find((t) => t.name === 'Agent')!, cwds }
  }
  const ctx = () => ({ cwd: repo, signal: new AbortController().signal, agentName: 'team-lead', teamName: 'crew', env, checkPermission: () => ({ behavior: 'allow' as const }) })

  it('runs in a fresh worktree and removes it when the subagent changed nothing', async () => {
    const { tool, cwds } = agentTool(() => undefined)
    const r = await runTool(tool, { description: 'look', prompt: 'look around', isolation: 'worktree' }, ctx())
    expect(r.isError).toBeFalsy()
    expect(cwds[0]).toMatch(new RegExp(`^${repo}/\\.claude/worktrees/crew-subagent-[0-9a-f]{6}$`))
    expect(r.content).toBe('REPORT\n\n[worktree] it changed nothing; its worktree was removed')
    expect(fs.existsSync(cwds[0])).toBe(false)
  })

  it('keeps the worktree of a subagent that left changes, and says where they are', async () => {
    const { tool, cwds } = agentTool((cwd) => fs.writeFileSync(path.join(cwd, 'fix.txt'), 'fixed\n'))
    const r = await runTool(tool, { description: 'fix', prompt: 'fix it', isolation: 'worktree' }, ctx())
    const branch = `swarm/crew/${path.basename(cwds[0]).slice('crew-'.length)}`
    expect(r.content).toBe(`REPORT\n\n[worktree] its changes are uncommitted in the worktree ${cwds[0]} (branch ${branch})`)
    expect(fs.readFileSync(path.join(cwds[0], 'fix.txt'), 'utf8')).toBe('fixed\n')
  })
})
