import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { gitHooksDir } from '../../src/sandbox/git-hooks.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * The hooks directory a sandbox keeps read-only is reused between Bash calls only while nothing
 * git reads changed: a new core.hooksPath — in the repository's config, the global one, or a file
 * an include names — is seen on the very next call.
 */

let h: IsolatedHome
afterEach(() => h?.cleanup())

function repo(): { dir: string; git: (...args: string[]) => void } {
  h = isolatedHome('swarm-git-hooks-')
  const dir = path.join(h.project, 'repo')
  fs.mkdirSync(dir)
  const git = (...args: string[]) => void execFileSync('git', ['-C', dir, ...args], { env: h.env, stdio: 'ignore' })
  git('init', '-q')
  return { dir, git }
}

describe('gitHooksDir', () => {
  it('follows core.hooksPath set in the repository and globally, call after call', async () => {
    const { dir, git } = repo()
    expect(await gitHooksDir(dir, h.env)).toBe(path.join(dir, '.git', 'hooks'))
    expect(await gitHooksDir(dir, h.env)).toBe(path.join(dir, '.git', 'hooks'))
    git('config', 'core.hooksPath', '.husky')
    expect(await gitHooksDir(dir, h.env)).toBe(path.join(dir, '.husky'))
    git('config', '--unset', 'core.hooksPath')
    fs.writeFileSync(path.join(h.env.HOME!, '.gitconfig'), '[core]\n\thooksPath = /elsewhere/hooks\n')
    expect(await gitHooksDir(dir, h.env)).toBe('/elsewhere/hooks')
    // A subdirectory that becomes a repository of its own is one from then on.
    const sub = path.join(dir, 'sub')
    fs.mkdirSync(sub)
    fs.rmSync(path.join(h.env.HOME!, '.gitconfig'))
    expect(await gitHooksDir(sub, h.env)).toBe(path.join(dir, '.git', 'hooks'))
    execFileSync('git', ['-C', sub, 'init', '-q'], { env: h.env })
    expect(await gitHooksDir(sub, h.env)).toBe(path.join(sub, '.git', 'hooks'))
  })

  it('asks git every time when a config includes another file (a change there is seen too)', async () => {
    const { dir, git } = repo()
    const included = path.join(h.base, 'included.gitconfig')
    fs.writeFileSync(included, '')
    git('config', 'include.path', included)
    expect(await gitHooksDir(dir, h.env)).toBe(path.join(dir, '.git', 'hooks'))
    fs.writeFileSync(included, '[core]\n\thooksPath = .husky\n')
    expect(await gitHooksDir(dir, h.env)).toBe(path.join(dir, '.husky'))
  })

  it('is undefined outside a work tree', async () => {
    h = isolatedHome('swarm-git-hooks-')
    expect(await gitHooksDir(h.project, h.env)).toBeUndefined()
  })
})
