import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isolatedEnv } from '../support/home.js'
import { BIN } from '../support/repo.js'

/** Commander's usage errors, in the README's form: one line `swarm: … — run swarm <cmd> --help`, exit 2. */

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-usage-'))
const env = isolatedEnv(home, { SWARM_HOME: home })
afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

function swarm(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('usage errors', () => {
  it.each([
    [['spawn', 'crew', 'a', '--bogus'], "swarm: unknown option '--bogus' — run swarm spawn --help"],
    [['team', 'create'], "swarm: missing required argument 'team' — run swarm team create --help"],
    [['tasks', 'crew', 'add'], "swarm: missing required argument 'subject' — run swarm tasks crew add --help"],
    [['status', 'crew', 'extra', 'more'], "swarm: too many arguments for 'status'. Expected 1 argument but got 3. — run swarm status --help"],
  ])('%j is one line on stderr and exit 2', (args, line) => {
    const r = swarm(...args)
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`${line}\n`)
  })

  it("an unknown command names it (and commander's suggestion) on the same line", () => {
    const r = swarm('statu')
    expect(r.code).toBe(2)
    expect(r.stderr).toBe("swarm: unknown command 'statu' (Did you mean status?) — run swarm --help\n")
  })

  it('a control character in an unknown option is not passed to the terminal', () => {
    const r = swarm('status', '--x\u001b]0;pwned\u0007')
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')).toHaveLength(2)
    expect([...r.stderr].filter((c) => c !== '\n' && (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))).toEqual([])
    expect(r.stderr).toMatch(/^swarm: unknown option '--x.*' — run swarm status --help\n$/)
  })

  it('--help and --version still print to stdout and exit 0', () => {
    expect(swarm('--version')).toMatchObject({ code: 0, stdout: '0.1.0\n', stderr: '' })
    const help = swarm('spawn', '--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: swarm spawn')
  })
})
