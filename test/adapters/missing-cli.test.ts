import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentHomeDir, teamDir } from '../../src/home/paths.js'
import { readTeam } from '../../src/teams/team-store.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasTmux } from '../support/tmux.js'

/**
 * An agent CLI that is not installed is refused before anything is written for it — by the one
 * preflight every adapter passes (built-in or a user's YAML): exit 7, one line naming the CLI and
 * where it was looked for; no roster entry, no agent home, and on `team create` no team.
 */
describe.skipIf(!hasTmux)('an agent CLI that is not installed', () => {
  let sb: Sandbox
  const oneLine = (stderr: string) => expect(stderr.trim().split('\n')).toHaveLength(1)
  const roster = async (team: string) => (await readTeam(team, sb.env)).members.map((m) => m.name)
  beforeAll(async () => {
    // No agent CLI on this PATH, and no SWARM_AGENT_BIN_DIR: nothing is installed, whatever this machine has.
    sb = sandbox({ PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, SWARM_AGENT_BIN_DIR: '', ANTHROPIC_API_KEY: 'test' })
    const dir = path.join(sb.project, '.claude', 'swarm-agents')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, 'mycli.yaml'),
      'description: a CLI of the user\nbinary: mycli-not-here\ncommand: [mycli-not-here, "{{prompt}}"]\nhookEvents: { Submit: prompt-submit, Done: stop }\n',
    )
    // What is looked for is the program the command runs: no `binary:`, or a path that is not there.
    fs.writeFileSync(path.join(dir, 'nobin.yaml'), 'command: [nobin-not-here, "{{prompt}}"]\nhookEvents: { Submit: prompt-submit, Done: stop }\n')
    fs.writeFileSync(path.join(dir, 'abs.yaml'), 'command: [/nonexistent/abs-cli, "{{prompt}}"]\nhookEvents: { Submit: prompt-submit, Done: stop }\n')
    // `binary: sh` is installed, but the command runs another program: the file is refused.
    fs.writeFileSync(path.join(dir, 'liar.yaml'), 'binary: sh\ncommand: [liar-not-here, "{{prompt}}"]\n')
    expect((await sb.swarm(['team', 'create', 't', '--no-start', '--cwd', sb.project])).code).toBe(0)
  })
  afterAll(async () => {
    await sb?.cleanup()
  })

  it.each([
    ['p', 'pi', /^swarm: pi: `pi` is not installed \(not on PATH, SWARM_AGENT_BIN_DIR unset\) — install it, or point SWARM_AGENT_BIN_DIR/],
    ['cx', 'codex', /^swarm: codex: `codex` is not installed \(not on PATH, SWARM_AGENT_BIN_DIR unset\)/],
    // A built-in written as a spec passes the same preflight.
    ['g', 'gemini', /^swarm: gemini: `gemini` is not installed \(not on PATH, SWARM_AGENT_BIN_DIR unset\)/],
    ['my', 'mycli', /^swarm: mycli: `mycli-not-here` is not installed \(not on PATH, SWARM_AGENT_BIN_DIR unset\)/],
    ['nb', 'nobin', /^swarm: nobin: `nobin-not-here` is not installed \(not on PATH, SWARM_AGENT_BIN_DIR unset\)/],
    ['ab', 'abs', /^swarm: abs: `\/nonexistent\/abs-cli` is not installed \(no executable file there\)/],
  ] as const)('spawn %s --agent %s: exit 7 in one line, no member, no agent home', async (name, agent, message) => {
    const r = await sb.swarm(['spawn', 't', name, '--agent', agent, '--backend', 'tmux'])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r.stderr)
    expect(r.stderr).toMatch(message)
    expect(await roster('t')).toEqual(['team-lead'])
    expect(fs.existsSync(agentHomeDir('t', name, sb.env))).toBe(false)
  })

  it('a file whose `binary` is not the program its command runs is refused by name (exit 5), nothing written', async () => {
    const r = await sb.swarm(['spawn', 't', 'li', '--agent', 'liar', '--backend', 'tmux'])
    expect(r.code, r.stderr).toBe(5)
    oneLine(r.stderr)
    expect(r.stderr).toContain('liar.yaml')
    expect(r.stderr).toContain('binary: "sh" is not the program command runs ("liar-not-here")')
    expect(await roster('t')).toEqual(['team-lead'])
    expect(fs.existsSync(agentHomeDir('t', 'li', sb.env))).toBe(false)
  })

  it('names SWARM_AGENT_BIN_DIR when it was looked in', async () => {
    const r = await sb.swarm(['spawn', 't', 'cx', '--agent', 'codex', '--backend', 'tmux'], {
      env: { ...sb.env, SWARM_AGENT_BIN_DIR: path.join(sb.root, 'bin') },
    })
    expect(r.code, r.stderr).toBe(7)
    expect(r.stderr).toContain(`not on PATH or in SWARM_AGENT_BIN_DIR=${path.join(sb.root, 'bin')}`)
    expect(await roster('t')).toEqual(['team-lead'])
  })

  it('team create --agent b:codex: exit 7 in one line, no team', async () => {
    const r = await sb.swarm([
      'team',
      'create',
      'c1',
      '--agents',
      'a,b',
      '--agent',
      'b:codex',
      '--backend',
      'tmux',
      '--cwd',
      sb.project,
      '--no-attach',
    ])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r.stderr)
    expect(r.stderr).toMatch(/^swarm: codex: `codex` is not installed \(not on PATH/)
    expect(fs.existsSync(teamDir('c1', sb.env))).toBe(false)
    expect(fs.existsSync(agentHomeDir('c1', 'b', sb.env))).toBe(false)
    expect((await sb.swarm(['team', 'list'])).stdout).not.toContain('c1')
  })

  it("team create --from a team file whose member runs a user's YAML adapter: exit 7, no team", async () => {
    const file = path.join(sb.root, 'team.yaml')
    fs.writeFileSync(file, 'backend: tmux\nmembers:\n  - name: a\n  - { name: m, agent: mycli }\n')
    const r = await sb.swarm(['team', 'create', 'c2', '--from', file, '--cwd', sb.project, '--no-attach'])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r.stderr)
    expect(r.stderr).toMatch(/^swarm: mycli: `mycli-not-here` is not installed/)
    expect(fs.existsSync(teamDir('c2', sb.env))).toBe(false)
  })

  it('team create --agent-type naming a definition whose `agent:` is a missing CLI: exit 7, no team', async () => {
    const agents = path.join(sb.project, '.claude', 'agents')
    fs.mkdirSync(agents, { recursive: true })
    fs.writeFileSync(path.join(agents, 'rev.md'), '---\nname: rev\ndescription: reviews with Codex\nagent: codex\n---\nReview.\n')
    const r = await sb.swarm([
      'team',
      'create',
      'c4',
      '--agents',
      'r',
      '--agent-type',
      'r:rev',
      '--backend',
      'tmux',
      '--cwd',
      sb.project,
      '--no-attach',
    ])
    expect(r.code, r.stderr).toBe(7)
    oneLine(r.stderr)
    expect(r.stderr).toMatch(/^swarm: codex: `codex` is not installed/)
    expect(fs.existsSync(teamDir('c4', sb.env))).toBe(false)
  })

  it('team create --no-start still writes the roster (it is started later, where the CLI is installed)', async () => {
    const r = await sb.swarm(['team', 'create', 'c3', '--agents', 'b', '--agent', 'b:codex', '--no-start', '--cwd', sb.project])
    expect(r.code, r.stderr).toBe(0)
    expect(await roster('c3')).toEqual(['team-lead', 'b'])
  })
})
