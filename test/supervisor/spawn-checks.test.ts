import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentHomeDir } from '../../src/home/paths.js'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readTeam } from '../../src/teams/team-store.js'
import { hasTmux } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'

/**
 * `swarm spawn` from a shell without a terminal (the sandbox's stdin is not a TTY): on a tmux
 * team it spawns on tmux (the team's recorded backend), and every refusal comes before anything
 * is written — no member on the roster, no agent home.
 */
describe.skipIf(!hasTmux)('swarm spawn on a tmux team, from a shell without a terminal', () => {
  let sb: Sandbox
  let server: LoopbackServer
  const roster = async () => (await readTeam('co', sb.env)).members.map((m) => m.name)
  beforeAll(async () => {
    server = await startLoopbackServer({ scenario: { fallback: { text: 'Noted.' } } })
    // SWARM_CLAUDE_BIN names no executable: Claude Code is "not installed" whatever this machine has.
    sb = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url, SWARM_CLAUDE_BIN: '/nonexistent/claude' })
    const created = await sb.swarm(['team', 'create', 'co', '--agents', 'a', '--backend', 'tmux', '--cwd', sb.project, '--no-attach'])
    expect(created.code, created.stderr).toBe(0)
  }, 60_000)
  afterAll(async () => {
    await sb?.cleanup()
    await server?.close()
  })

  it('spawns without --backend on the backend the team runs on', async () => {
    const r = await sb.swarm(['spawn', 'co', 'w2', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'w2', backend: 'tmux', pane: expect.stringMatching(/^%\d+$/) })
    await waitFor('w2 alive', async () => {
      const s = JSON.parse((await sb.swarm(['status', 'co', '--json'])).stdout) as { members: Array<{ name: string; state: string }> }
      return s.members.find((m) => m.name === 'w2')?.state === 'alive'
    })
  }, 60_000)

  it('checks the name before anything else', async () => {
    for (const bad of ['.hidden', 'a/b', 'x'.repeat(65)]) {
      const r = await sb.swarm(['spawn', 'co', bad])
      expect(r.code, `${bad}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(/^swarm: invalid agent name/)
    }
  })

  it.each([
    ['cl', ['--agent', 'claude'], 7, /SWARM_CLAUDE_BIN=\/nonexistent\/claude is not an executable file/],
    ['nope', ['--agent', 'mycli'], 2, /unknown agent "mycli"/],
    ['br', ['--agent', 'broken'], 5, /broken\.yaml/],
    ['w.1', ['--agent', 'claude'], 2, /Claude Code cannot address the agent "w\.1"/],
  ] as const)(
    'refuses %s %j with exit %i before anything is written',
    async (name, args, code, message) => {
      const dir = path.join(sb.project, '.claude', 'swarm-agents')
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, 'broken.yaml'), 'kind: [not, a, kind\n')
      const before = await roster()
      const r = await sb.swarm(['spawn', 'co', name, ...args])
      expect(r.code, r.stderr).toBe(code)
      expect(r.stderr).toMatch(message)
      expect(await roster()).toEqual(before)
      expect(fs.existsSync(agentHomeDir('co', name, sb.env))).toBe(false)
      const status = JSON.parse((await sb.swarm(['status', 'co', '--json'])).stdout) as { members: Array<{ name: string }> }
      expect(status.members.map((m) => m.name)).not.toContain(name)
    },
    30_000,
  )
})
