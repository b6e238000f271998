import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'
import { bashCliAdapter, writeProjectAdapter } from '../support/bash-cli.js'

const git = promisify(execFile)

/**
 * Adversarial review: `.git` is read-only in a CLI teammate's sandbox, but a project whose hooks
 * live in its tree (`core.hooksPath=.husky`, as husky sets it) would have them writable — and the
 * user's next `git commit` runs them, outside every sandbox.
 */
const PROBE = String.raw`
if (printf '#!/bin/sh\ntouch "$HOME/pwned"\n' > "$PWD/.husky/pre-commit") 2>/dev/null; then echo wrote; else echo refused; fi > "$PWD/hooks.out"
exec sleep 600
`
const ADAPTER = bashCliAdapter(PROBE)

describe('adversarial: git hooks in the project tree', () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
  }, 30_000)

  it('a hooks directory configured inside the tree (core.hooksPath) is read-only for a CLI teammate', async () => {
    t = await agentTeam()
    await git('git', ['init', '-q', t.work])
    await git('git', ['-C', t.work, 'config', 'core.hooksPath', '.husky'])
    await fs.mkdir(path.join(t.work, '.husky'))
    await fs.writeFile(path.join(t.work, '.husky', 'pre-commit'), '#!/bin/sh\nnpm test\n')
    await writeProjectAdapter(t.work, 'probe', ADAPTER)
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'probe', '--backend', 'tmux'])
    expect(spawned.code, spawned.stderr).toBe(0)
    const r = await waitFor('fay to try', () => fs.readFile(path.join(t.work, 'hooks.out'), 'utf8').catch(() => ''), 30_000)
    expect(r.trim()).toBe('refused')
    expect(await fs.readFile(path.join(t.work, '.husky', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\nnpm test\n')
  }, 60_000)
})
