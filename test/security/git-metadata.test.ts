import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createWorktree } from '../../src/worktrees/worktree.js'
import { afterTest, useLoopback } from '../support/agent-team.js'
import { commitFiles, git } from '../worktrees/git-repo.js'
import { ALL_MODES, type Attack, type HostileFixture, makeHostileFixture, pathWithoutBwrap, runAttacks, swarm } from './sandbox-helpers.js'

/**
 * Finding 1: a teammate that can write git metadata — the repository's `.git/config` or hooks, or
 * a worktree's `.git` file — made swarm's own git (status, worktrees, team delete, worktree add)
 * run its program in the user's process. An executed fsmonitor or hook leaves MARKER behind.
 */

let loopback: LoopbackServer
let fx: HostileFixture | undefined
useLoopback((l) => (loopback = l))

const trap = (marker: string) => `touch ${marker}; false #`

/** alice in the main checkout goes for the repository's own config and hooks. */
function repoAttacks(f: HostileFixture): Attack[] {
  const cfg = path.join(f.repo, '.git', 'config')
  return [
    { id: 'toolu_edit_cfg', tool: 'Edit', input: { file_path: cfg, old_string: '[core]', new_string: `[core]\n\tfsmonitor = ${trap(f.marker)}` } },
    {
      id: 'toolu_write_hook',
      tool: 'Write',
      input: { file_path: path.join(f.repo, '.git', 'hooks', 'post-checkout'), content: `#!/bin/sh\ntouch ${f.marker}\n` },
    },
    { id: 'toolu_bash_cfg', tool: 'Bash', input: { command: `git config core.fsmonitor "${trap(f.marker)}"` } },
    { id: 'toolu_bash_append', tool: 'Bash', input: { command: `printf '[core]\\n\\tfsmonitor = ${trap(f.marker)}\\n' >> .git/config` } },
  ]
}

/** alice in her worktree replaces its `.git` file with a link to a git dir she made. */
function worktreeAttacks(f: HostileFixture): Attack[] {
  const evil = path.join(f.worktree, 'evil')
  const write = (id: string, rel: string, content: string): Attack => ({ id, tool: 'Write', input: { file_path: path.join(evil, rel), content } })
  return [
    write('toolu_evil_head', 'HEAD', 'ref: refs/heads/main\n'),
    write('toolu_evil_cfg', 'config', `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = ${trap(f.marker)}\n`),
    write('toolu_evil_objects', 'objects/.keep', ''),
    write('toolu_evil_refs', 'refs/.keep', ''),
    { id: 'toolu_write_dotgit', tool: 'Write', input: { file_path: path.join(f.worktree, '.git'), content: `gitdir: ${evil}\n` } },
    { id: 'toolu_bash_dotgit', tool: 'Bash', input: { command: `mv .git .git.old; printf 'gitdir: %s/evil\\n' "$PWD" > .git` } },
  ]
}

const PROTECTED_IDS = new Set([
  'toolu_edit_cfg',
  'toolu_write_hook',
  'toolu_bash_cfg',
  'toolu_bash_append',
  'toolu_write_dotgit',
  'toolu_bash_dotgit',
])

/** swarm's own commands that run git in the team's worktrees; none may run the trap. */
async function runSwarmCommandsAndCheckMarker(f: HostileFixture): Promise<void> {
  swarm(f, 'status', 'crew')
  swarm(f, 'worktrees', 'crew')
  await createWorktree({ repoDir: f.repo, team: 'crew', name: 'carol', env: f.env }).catch(() => undefined)
  swarm(f, 'team', 'delete', 'crew', '--force')
  await expect(fs.stat(f.marker), 'an fsmonitor or hook of the teammate ran').rejects.toThrow()
}

for (const variant of ['sandbox on', 'bwrap absent'] as const) {
  describe(`a teammate writing git metadata (${variant})`, () => {
    const make = async (aliceIn: 'main' | 'worktree') => {
      const base = path.join(await fs.mkdtemp(path.join((await import('node:os')).tmpdir(), 'swarm-nobwrap-')), 'bin')
      afterTest(() => fs.rm(path.dirname(base), { recursive: true, force: true }))
      return makeHostileFixture(loopback, { aliceIn, ...(variant === 'bwrap absent' ? { path: pathWithoutBwrap(base) } : {}) })
    }

    for (const mode of ALL_MODES) {
      it(`${mode}: the repository's .git/config and hooks: asked or refused, unchanged, never run`, async () => {
        fx = await make('main')
        const cfg = path.join(fx.repo, '.git', 'config')
        const before = await fs.readFile(cfg, 'utf8')
        const results = await runAttacks(loopback, fx, mode, repoAttacks(fx), ['Bash(git config:*)', 'Bash(printf:*)'])
        for (const [id, r] of results) expect([id, r.outcome]).not.toEqual([id, 'ran'])
        if (variant === 'bwrap absent' && mode !== 'dontAsk' && mode !== 'plan') {
          for (const id of ['toolu_bash_cfg', 'toolu_bash_append']) expect([id, results.get(id)!.outcome]).toEqual([id, 'asked'])
        }
        expect(await fs.readFile(cfg, 'utf8')).toBe(before)
        await expect(fs.stat(path.join(fx.repo, '.git', 'hooks', 'post-checkout'))).rejects.toThrow()
        await runSwarmCommandsAndCheckMarker(fx)
      }, 120_000)

      it(`${mode}: a worktree's .git file: asked or refused, unchanged, never followed`, async () => {
        fx = await make('worktree')
        const dotGit = path.join(fx.worktree, '.git')
        const before = await fs.readFile(dotGit, 'utf8')
        const results = await runAttacks(loopback, fx, mode, worktreeAttacks(fx), ['Bash(mv:*)'])
        for (const [id, r] of results) if (PROTECTED_IDS.has(id)) expect([id, r.outcome]).not.toEqual([id, 'ran'])
        expect(await fs.readFile(dotGit, 'utf8')).toBe(before)
        await runSwarmCommandsAndCheckMarker(fx)
      }, 120_000)
    }
  })
}

describe("swarm's own git runs nothing the repository configures (metadata changed behind swarm's back)", () => {
  it('fsmonitor, hooks and filter drivers in the config: status, worktrees, worktree add and team delete run none of them', async () => {
    fx = await makeHostileFixture(loopback, { aliceIn: 'main' })
    const wt = fx.worktree
    git(fx.repo, fx.env, 'config', 'core.fsmonitor', trap(fx.marker))
    git(fx.repo, fx.env, 'config', 'filter.evil.clean', `touch ${fx.marker}; cat`)
    git(fx.repo, fx.env, 'config', 'filter.evil.smudge', `touch ${fx.marker}; cat`)
    git(fx.repo, fx.env, 'config', 'filter.evil.required', 'true')
    await fs.mkdir(path.join(fx.repo, '.git', 'hooks'), { recursive: true })
    for (const hook of ['post-checkout', 'pre-commit', 'reference-transaction']) {
      await fs.writeFile(path.join(fx.repo, '.git', 'hooks', hook), `#!/bin/sh\ntouch ${fx.marker}\n`, { mode: 0o755 })
    }
    await fs.writeFile(path.join(fx.repo, '.gitattributes'), '*.txt filter=evil\n')
    await fs.writeFile(path.join(fx.repo, 'a.txt'), 'a\n')
    commitFiles(fx.repo, { ...fx.env, GIT_CONFIG_PARAMETERS: "'filter.evil.clean=cat' 'core.hookspath=/dev/null'" }, ['.gitattributes', 'a.txt'])
    await fs.rm(fx.marker, { force: true })
    await fs.writeFile(path.join(wt, 'a.txt'), 'changed\n') // status must look at it
    const listed = swarm(fx, 'worktrees', 'crew', '--json')
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).worktrees[0]).toMatchObject({ uncommitted: [{ status: '??', path: 'a.txt' }] })
    await runSwarmCommandsAndCheckMarker(fx)
  }, 60_000)

  it('a worktree whose .git was pointed elsewhere is refused: shown in worktrees, remove exits 4, no git runs in it', async () => {
    fx = await makeHostileFixture(loopback, { aliceIn: 'main' })
    const evil = path.join(fx.base, 'evil')
    git(fx.base, fx.env, 'init', '-q', evil)
    git(evil, fx.env, 'config', 'core.fsmonitor', trap(fx.marker))
    const dotGit = path.join(fx.worktree, '.git')
    await fs.writeFile(dotGit, `gitdir: ${path.join(evil, '.git')}\n`)
    const listed = swarm(fx, 'worktrees', 'crew', '--json')
    expect(listed.code, listed.stderr).toBe(0)
    const entry = JSON.parse(listed.stdout).worktrees[0]
    expect(entry.tampered).toContain(`${dotGit} points at ${path.join(evil, '.git')}`)
    expect(swarm(fx, 'worktrees', 'crew').stdout).toContain('refused:')
    swarm(fx, 'status', 'crew')
    // spawn --worktree of the same name would reuse it: refused as well.
    await expect(createWorktree({ repoDir: fx.repo, team: 'crew', name: 'bob', env: fx.env })).rejects.toMatchObject({
      code: 'SWARM_WORKTREE_TAMPERED',
      exitCode: 4,
    })
    const deleted = swarm(fx, 'team', 'delete', 'crew', '--force', '--discard')
    expect(deleted.stdout + deleted.stderr).toContain('is not the worktree swarm made')
    // The team is gone, so the worktree belongs to nobody: removing it by hand is refused too.
    const removed = swarm(fx, 'worktrees', 'remove', 'crew', 'bob', '--discard')
    expect(removed.code, removed.stdout + removed.stderr).toBe(4)
    expect(removed.stdout + removed.stderr).toContain('is not the worktree swarm made')
    await fs.stat(fx.worktree) // kept
    await expect(fs.stat(fx.marker)).rejects.toThrow()
  }, 60_000)
})
