import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { codexAdapter } from '../../src/adapters/codex.js'
import { builtInAdapter } from '../../src/adapters/registry.js'
import { piAdapter } from '../../src/adapters/pi.js'
import { alwaysAllowed, alwaysRules, alwaysRulesPath, rememberAlways, shellCommandOf, shellSuggestions } from '../../src/asks/always.js'

const geminiAdapter = builtInAdapter('gemini')!

/** The one "always" store: the rules an "always" answer leaves for a member (or the team), decided by swarm's rule engine. */
let dir: string
let env: NodeJS.ProcessEnv
beforeEach(async () => {
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-always-')))
  env = { SWARM_HOME: path.join(dir, 'home') }
  await fs.mkdir(path.join(dir, 'home', 'teams', 't', 'agents', 'm'), { recursive: true })
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

describe('the always store', () => {
  it("knows each CLI's own shell tools, and nothing else", () => {
    const shell = (a: { shellTools?: readonly string[] }) => a.shellTools ?? []
    expect(shellCommandOf(shell(geminiAdapter), 'run_shell_command', { command: 'ls' })).toBe('ls')
    expect(shellCommandOf(shell(piAdapter), 'bash', { command: 'ls' })).toBe('ls')
    expect(shellCommandOf(shell(codexAdapter), 'Bash', { command: 'ls' })).toBe('ls')
    // Another CLI's shell tool is not this one's.
    expect(shellCommandOf(shell(geminiAdapter), 'bash', { command: 'ls' })).toBeUndefined()
    expect(shellCommandOf(shell(geminiAdapter), 'write_file', { command: 'ls' })).toBeUndefined()
    expect(shellCommandOf(shell(piAdapter), 'bash', { command: ['ls'] })).toBeUndefined()
  })

  it('keeps the suggested rule and allows what it covers, never a compound command or the control plane', async () => {
    const cwd = path.join(dir, 'work')
    expect(await alwaysAllowed('t', 'm', 'touch a.txt', cwd, env)).toBeUndefined()
    await rememberAlways({ team: 't', member: 'm' }, shellSuggestions('touch a.txt', cwd), env)
    await rememberAlways({ team: 't', member: 'm' }, shellSuggestions('touch b.txt', cwd), env)
    expect(JSON.parse(await fs.readFile(alwaysRulesPath({ team: 't', member: 'm' }, env), 'utf8'))).toEqual({ allow: ['Bash(touch:*)'] })
    expect(await alwaysAllowed('t', 'm', 'touch other.txt', cwd, env)).toBe('Bash(touch:*)')
    expect(await alwaysAllowed('t', 'm', 'touch x && rm -rf y', cwd, env)).toBeUndefined()
    expect(await alwaysAllowed('t', 'm', `touch ${path.join(dir, 'home', 'teams', 't', 'x')}`, cwd, env)).toBeUndefined()
    expect(await alwaysAllowed('t', 'm', 'mkdir d', cwd, env)).toBeUndefined()
    // Another teammate's calls are its own.
    expect(await alwaysAllowed('t', 'other', 'touch a.txt', cwd, env)).toBeUndefined()
  })

  it("keeps a team's rules apart from a member's, and honours both for every member; a kept deny wins", async () => {
    const cwd = path.join(dir, 'work')
    await rememberAlways({ team: 't' }, ['Bash(npm test:*)'], env)
    expect(JSON.parse(await fs.readFile(alwaysRulesPath({ team: 't' }, env), 'utf8'))).toEqual({ allow: ['Bash(npm test:*)'] })
    expect(await alwaysAllowed('t', 'm', 'npm test --watch', cwd, env)).toBe('Bash(npm test:*)')
    expect(await alwaysAllowed('t', 'other', 'npm test', cwd, env)).toBe('Bash(npm test:*)')
    expect((await alwaysRules('t', 'm', env)).map((r) => [r.source, r.raw])).toEqual([['team', 'Bash(npm test:*)']])
    await rememberAlways(
      { team: 't', member: 'm' },
      [{ type: 'addRules', behavior: 'deny', rules: [{ toolName: 'Bash', ruleContent: 'npm test:*' }] }],
      env,
    )
    expect(await alwaysAllowed('t', 'm', 'npm test', cwd, env)).toBeUndefined()
    expect(await alwaysAllowed('t', 'other', 'npm test', cwd, env)).toBe('Bash(npm test:*)')
  })

  it('a hand-edited rule that does not parse allows nothing, and breaks nothing else', async () => {
    await fs.writeFile(alwaysRulesPath({ team: 't', member: 'm' }, env), JSON.stringify({ allow: ['Bash(', 'Bash(ls:*)'] }))
    expect(await alwaysAllowed('t', 'm', 'ls -la', path.join(dir, 'work'), env)).toBe('Bash(ls:*)')
  })
})
