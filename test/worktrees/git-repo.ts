import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { GIT_IDENTITY } from '../support/home.js'

/**
 * git with the tests' identity and no configuration at all (not even the test's own global file):
 * no hooks, signing or templates of anyone's.
 */
export const GIT_ENV: Record<string, string> = {
  ...GIT_IDENTITY,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

export function git(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** `git init` in `dir` with one commit (README.md); returns the commit. */
export function initRepo(dir: string, env: NodeJS.ProcessEnv): string {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, env, 'init', '-q', '-b', 'main')
  fs.writeFileSync(path.join(dir, 'README.md'), 'hello\n')
  git(dir, env, 'add', 'README.md')
  git(dir, env, 'commit', '-q', '-m', 'first')
  return git(dir, env, 'rev-parse', 'HEAD').trim()
}

export function branchExists(dir: string, env: NodeJS.ProcessEnv, branch: string): boolean {
  try {
    git(dir, env, 'show-ref', '--verify', '--quiet', `refs/heads/${branch}`)
    return true
  } catch {
    return false
  }
}

/** Stages `files` and commits them. */
export function commitFiles(dir: string, env: NodeJS.ProcessEnv, files: string[], message = 'files'): void {
  git(dir, env, 'add', '--', ...files)
  git(dir, env, 'commit', '-q', '-m', message)
}

/** Writes `content` to `file` (when given) and commits it with `message`. */
export function commitFile(dir: string, env: NodeJS.ProcessEnv, file: string, message: string, content?: string): void {
  if (content !== undefined) fs.writeFileSync(path.join(dir, file), content)
  commitFiles(dir, env, [file], message)
}
