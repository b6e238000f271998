import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../bin/swarm.js')
let dir: string
let env: NodeJS.ProcessEnv

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-agent-cli-'))
  env = { PATH: process.env.PATH, HOME: dir, SWARM_HOME: path.join(dir, 'home'), NO_COLOR: '1' }
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

async function swarm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env, cwd: dir })
    return { code: 0, ...r }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('--agent on team create, team files and spawn', () => {
  it("records each member's agent CLI, and refuses unknown kinds and names before writing anything", async () => {
    const ok = await swarm(['team', 'create', 'mix', '--agents', 'a,b,c', '--agent', 'a:codex', '--agent', 'b:gemini', '--no-start', '--json'])
    expect(ok.code, ok.stderr).toBe(0)
    const team = JSON.parse(ok.stdout) as { members: Array<{ name: string; agent?: string }> }
    expect(Object.fromEntries(team.members.map((m) => [m.name, m.agent]))).toEqual({ 'team-lead': undefined, a: 'codex', b: 'gemini', c: undefined })

    const unknown = await swarm(['team', 'create', 'bad', '--agents', 'a', '--agent', 'a:nope', '--no-start'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^swarm: unknown agent "nope" — use one of swarm, claude, codex, gemini, opencode, pi/)
    await expect(fs.stat(path.join(dir, 'home', 'teams', 'bad'))).rejects.toThrow()
    // A member named only by --agent (or --agent-type) is a member: no need to repeat it in --agents.
    const named = await swarm(['team', 'create', 'named', '--agents', 'a', '--agent', 'z:codex', '--agent-type', 'y:Explore', '--no-start', '--json'])
    expect(named.code, named.stderr).toBe(0)
    const roster = (JSON.parse(named.stdout) as { members: Array<{ name: string; agent?: string; agentType?: string }> }).members
    expect(roster.map((m) => [m.name, m.agent, m.agentType])).toEqual([
      ['team-lead', undefined, 'team-lead'],
      ['a', undefined, 'general-purpose'],
      ['z', 'codex', 'general-purpose'],
      ['y', undefined, 'Explore'],
    ])

    await fs.writeFile(path.join(dir, 'team.yaml'), 'members:\n  - { name: r, agent: pi }\n')
    const fromFile = await swarm(['team', 'create', 'file', '--from', path.join(dir, 'team.yaml'), '--no-start', '--json'])
    expect(fromFile.code, fromFile.stderr).toBe(0)
    expect((JSON.parse(fromFile.stdout) as { members: Array<{ name: string; agent?: string }> }).members.find((m) => m.name === 'r')?.agent).toBe(
      'pi',
    )

    const both = await swarm(['spawn', 'mix', 'c', '--agent', 'codex', '--command', 'sleep 1'])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--command and --agent both say what to run')
  })
})
