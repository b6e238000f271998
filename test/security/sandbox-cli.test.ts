import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN } from '../permissions/requests/bubbling-helpers.js'
import { pathWithoutBwrap } from './sandbox-helpers.js'
import { isolatedEnv } from '../support/home.js'

/** What the user is told about the sandbox: `swarm doctor` runs it, `team create` warns when it cannot. */

let base: string
let noBwrap: string

beforeAll(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-sandbox-cli-')))
  noBwrap = pathWithoutBwrap(path.join(base, 'bin'))
})
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true })
})

function swarm(env: NodeJS.ProcessEnv, ...args: string[]) {
  return swarmIn(base, env, ...args)
}

function swarmIn(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  const home = path.join(base, `home-${Math.random().toString(36).slice(2)}`)
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: isolatedEnv(base, { SWARM_HOME: home, CLAUDE_CONFIG_DIR: '', ...env }),
    cwd,
    encoding: 'utf8',
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('the sandbox, as the CLI reports it', () => {
  it('doctor runs a sandboxed command and says it is confined', () => {
    const r = swarm({}, 'doctor', '--json')
    const report = JSON.parse(r.stdout)
    expect(report.sandbox).toMatchObject({ ok: true, enabled: true })
    expect(report.sandbox.detail).toContain('wrote only its own directory')
    expect(report.missing.join('\n')).not.toContain('sandbox')
    expect(swarm({}, 'doctor').stdout).toMatch(/sandbox: ok \(/)
  })

  it('doctor without bwrap says so, with the install command', () => {
    const report = JSON.parse(swarm({ PATH: noBwrap }, 'doctor', '--json').stdout)
    expect(report.sandbox).toMatchObject({ ok: false })
    expect(report.missing.join('\n')).toContain('apt-get install -y bubblewrap')
  })

  it('doctor names a configured bwrapPath that is not there, not a missing bubblewrap', async () => {
    const project = path.join(base, 'bad-bwrap')
    await fs.mkdir(path.join(project, '.claude'), { recursive: true })
    await fs.writeFile(path.join(project, '.claude', 'settings.json'), JSON.stringify({ sandbox: { bwrapPath: '/nonexistent/bwrap' } }))
    const report = JSON.parse(swarmIn(project, {}, 'doctor', '--json').stdout)
    expect(report.sandbox).toMatchObject({ ok: false })
    expect(report.sandbox.detail).toContain('sandbox.bwrapPath /nonexistent/bwrap is not an executable file')
    expect(report.sandbox.detail).not.toContain('not installed')
  })

  it('team create warns once without bwrap, and not at all with it', () => {
    const without = swarm({ PATH: noBwrap }, 'team', 'create', 'w1', '--agents', 'a,b,c', '--no-start')
    expect(without.code, without.stderr).toBe(0)
    expect(without.stderr.match(/swarm: warning: teammates' Bash runs without the OS sandbox/g)).toHaveLength(1)
    expect(without.stderr).toContain('apt-get install -y bubblewrap')
    const withIt = swarm({}, 'team', 'create', 'w2', '--agents', 'a', '--no-start')
    expect(withIt.code, withIt.stderr).toBe(0)
    expect(withIt.stderr).not.toContain('sandbox')
  })
})
