import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { planAgentLaunch } from '../../src/adapters/launch-plan.js'
import { resolveAdapter } from '../../src/adapters/registry.js'
import { agentHomeDir } from '../../src/home/paths.js'
import { sandboxAvailability } from '../../src/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasTmux } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'

/**
 * `files[].writable`: a config file seeded once and then the CLI's own — a CLI that rewrites its
 * config by rename (Copilot CLI's config.json) can, inside swarm's sandbox, while the files swarm
 * rewrites at each start stay read-only there. A real teammate in a real pane, in the real sandbox.
 */
const available = await sandboxAvailability(defaultSandboxConfig(), process.env)

// The CLI replaces config.json by rename and tries to write settings.json, then says how each went.
const SCRIPT = [
  'D="$SEEDED_HOME"',
  `printf '{"theme":"light"}' > "$D/config.json.new" && mv "$D/config.json.new" "$D/config.json" && a=renamed || a=refused`,
  '(printf x > "$D/settings.json") 2>/dev/null && b=written || b=refused',
  'echo "$a $b" > "$SEEDED_OUT"',
  'exec sleep 120',
].join('; ')

const SPEC = `
command: ${JSON.stringify(['sh', '-c', SCRIPT])}
env: { SEEDED_HOME: '{{configDir}}', SEEDED_OUT: '{{cwd}}/seeded.out' }
files:
  - { path: config.json, json: { theme: dark }, writable: true }
  - { path: settings.json, json: { hooks: none } }
delivery: { method: inbox }
quit: { signal: SIGTERM, graceMs: 1000 }
`

describe('a file a spec seeds once (files[].writable)', () => {
  let sb: Sandbox
  beforeAll(async () => {
    sb = sandbox({ ANTHROPIC_API_KEY: 'test' })
    fs.mkdirSync(path.join(sb.project, '.claude', 'swarm-agents'), { recursive: true })
    fs.writeFileSync(path.join(sb.project, '.claude', 'swarm-agents', 'seeded.yaml'), SPEC)
  })
  afterAll(async () => {
    await sb?.cleanup()
  })

  it('is written only when missing and is left out of the read-only files; the others are rewritten each start', async () => {
    const adapter = (await resolveAdapter('seeded', { cwd: sb.project, env: sb.env }))!
    const input = { team: 'u', name: 'm', cwd: sb.project, env: sb.env }
    const first = await planAgentLaunch(adapter, input)
    const home = agentHomeDir('u', 'm', sb.env)
    expect(JSON.parse(fs.readFileSync(path.join(home, 'config.json'), 'utf8'))).toEqual({ theme: 'dark' })
    expect(first.argv).not.toContain(path.join(home, 'config.json'))
    expect(first.argv).toContain(path.join(home, 'settings.json'))
    fs.writeFileSync(path.join(home, 'config.json'), '{"theme":"mine"}')
    fs.writeFileSync(path.join(home, 'settings.json'), '{}')
    await planAgentLaunch(adapter, { ...input, resume: true })
    expect(fs.readFileSync(path.join(home, 'config.json'), 'utf8')).toBe('{"theme":"mine"}')
    expect(JSON.parse(fs.readFileSync(path.join(home, 'settings.json'), 'utf8'))).toEqual({ hooks: 'none' })
  })

  it.skipIf(!hasTmux || available.status !== 'sandboxed')(
    'the CLI may replace it by rename inside the sandbox, and cannot write the others',
    async () => {
      expect((await sb.swarm(['team', 'create', 't', '--no-start', '--cwd', sb.project])).code).toBe(0)
      const r = await sb.swarm(['spawn', 't', 'cop', '--agent', 'seeded', '--backend', 'tmux'])
      expect(r.code, r.stderr).toBe(0)
      const out = path.join(sb.project, 'seeded.out')
      await waitFor('the CLI to report', () => fs.existsSync(out) && fs.readFileSync(out, 'utf8').trim() !== '', 30_000)
      expect(fs.readFileSync(out, 'utf8').trim()).toBe('renamed refused')
      const home = agentHomeDir('t', 'cop', sb.env)
      expect(fs.readFileSync(path.join(home, 'config.json'), 'utf8')).toBe('{"theme":"light"}')
      expect(JSON.parse(fs.readFileSync(path.join(home, 'settings.json'), 'utf8'))).toEqual({ hooks: 'none' })
    },
    60_000,
  )
})
