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
 * Adversarial review: a protected path below the top of a writable directory (a nested repository's
 * `.git`, a submodule's) is read-only by its mount, but its parent directory is not: a command moves
 * the parent away and plants a `.git` of its own at the same path. The sandbox then took the planted
 * one for the one that "existed before" and kept it (moving the real one aside) — a git config
 * that runs a program at the user's next `git status` there.
 */
const available = await sandboxAvailability(defaultSandboxConfig(), process.env)

let iso: IsolatedHome
beforeEach(() => {
  iso = isolatedHome('swarm-adv-displace-', GIT_ENV)
  execFileSync('git', ['init', '-q', path.join(iso.project, 'sub')], { env: iso.env })
})
afterEach(async () => iso.cleanup())

describe.skipIf(available.status !== 'sandboxed')('adversarial: a protected path displaced through its parent', () => {
  it('a .git planted where a read-only one was moved away is moved aside when the command ends', async () => {
    const sandbox = createBashSandbox({
      config: defaultSandboxConfig(),
      env: iso.env,
      label: 'adv-displace',
      hidden: [],
      readOnly: [],
      writableDirs: () => [iso.project],
    })
    const plant = "mv sub sub2 && mkdir -p sub/.git && printf '[core]\\n\\tfsmonitor = touch planted-ran\\n' > sub/.git/config && echo planted"
    try {
      const out = (await runTool(bashTool, { command: plant }, makeContext(iso.project, { sandbox, env: iso.env }))).content
      expect(out).toContain('planted')
    } finally {
      await sandbox.close()
    }
    const config = path.join(iso.project, 'sub', '.git', 'config')
    expect(fs.existsSync(config) ? fs.readFileSync(config, 'utf8') : '', 'the planted git config').not.toContain('planted-ran')
  })
})
