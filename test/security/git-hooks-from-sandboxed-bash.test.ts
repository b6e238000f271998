import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runTool } from '../../src/agent/tool.js'
import { bashTool } from '../../src/agent/tools/bash.js'
import { createBashSandbox, sandboxAvailability } from '../../src/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { makeContext } from '../agent/helpers.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { GIT_ENV } from '../worktrees/git-repo.js'

/**
 * Adversarial review: swarm's own teammates' sandboxed Bash keeps `.git` read-only, but a hooks
 * directory the project configures in its tree (`core.hooksPath=.husky`) was writable — and the
 * user's next `git commit` runs what was written there, outside every sandbox. The control: the
 * same command with the sandbox off writes it.
 */
const available = await sandboxAvailability(defaultSandboxConfig(), process.env)

let iso: IsolatedHome
beforeEach(() => {
  iso = isolatedHome('swarm-adv-hooks-', GIT_ENV)
  execFileSync('git', ['init', '-q', iso.project], { env: iso.env })
  execFileSync('git', ['-C', iso.project, 'config', 'core.hooksPath', '.husky'], { env: iso.env })
  fs.mkdirSync(path.join(iso.project, '.husky'))
  fs.writeFileSync(path.join(iso.project, '.husky', 'pre-commit'), 'npm test\n')
})
afterEach(async () => iso.cleanup())

async function bash(command: string, enabled: boolean): Promise<void> {
  const sandbox = createBashSandbox({
    config: { ...defaultSandboxConfig(), enabled },
    env: iso.env,
    label: 'adv-hooks',
    hidden: [],
    readOnly: [],
    writableDirs: () => [iso.project],
  })
  try {
    await runTool(bashTool, { command }, makeContext(iso.project, { sandbox, env: iso.env }))
  } finally {
    await sandbox.close()
  }
}

describe.skipIf(available.status !== 'sandboxed')('adversarial: git hooks in the tree, from sandboxed Bash', () => {
  it('a hooks directory configured inside the tree is read-only; with the sandbox off the same command writes it', async () => {
    const hook = path.join(iso.project, '.husky', 'pre-commit')
    await bash("printf 'touch /tmp/pwned\\n' > .husky/pre-commit", true)
    expect(fs.readFileSync(hook, 'utf8')).toBe('npm test\n')
    await bash("printf 'touch /tmp/pwned\\n' > .husky/pre-commit", false)
    expect(fs.readFileSync(hook, 'utf8')).toBe('touch /tmp/pwned\n')
  })
})
