import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentDir, teamDir } from '../../src/home/paths.js'
import { assertTeamModel } from '../../src/cli/model-check.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'

/**
 * The model configuration, the one thing a first real team needs: `doctor` reports it missing
 * (with the fix), and `team resume` refuses to start swarm agents without it exactly as `team
 * create` does — before anything is started, where it once said "respawned" and every pane died.
 */
describe('a missing model configuration', () => {
  let sb: Sandbox
  beforeAll(() => {
    sb = sandbox()
  })
  afterAll(() => sb?.cleanup())
  const noModel = () => ({ ...sb.env, ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '', ANTHROPIC_BASE_URL: '' })

  it('doctor names it in missing, with the fix; a key and a base URL satisfy it', async () => {
    const r = await sb.swarm(['doctor', '--json'], { env: noModel() })
    const report = JSON.parse(r.stdout) as { model: { configured: boolean; detail: string }; missing: string[] }
    expect(report.model).toMatchObject({ configured: false })
    const line = report.missing.find((m) => m.startsWith('model: '))
    expect(line).toContain('neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set')
    expect(line).toContain('swarm model serve')
    expect((await sb.swarm(['doctor'], { env: noModel() })).stdout).toMatch(/^model: {3}no \(neither ANTHROPIC_API_KEY/m)

    const configured = { ...noModel(), ANTHROPIC_API_KEY: 'swarm-loopback', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }
    const ok = JSON.parse((await sb.swarm(['doctor', '--json'], { env: configured })).stdout) as typeof report
    expect(ok.model).toEqual({ configured: true, detail: 'ANTHROPIC_API_KEY set, at http://127.0.0.1:9' })
    expect(ok.missing.filter((m) => m.startsWith('model: '))).toEqual([])
    // The key's value is never printed.
    expect(JSON.stringify(ok)).not.toContain('swarm-loopback')
  }, 30_000)

  it('team resume refuses with the same one line and exit code as team create, and starts nothing', async () => {
    const created = await sb.swarm(['team', 'create', 'later', '--agents', 'a', '--backend', 'in-process', '--no-start'], { env: noModel() })
    expect(created.code, created.stderr).toBe(0)
    const create = await sb.swarm(['team', 'create', 'now', '--agents', 'a', '--backend', 'in-process'], { env: noModel() })
    const resume = await sb.swarm(['team', 'resume', 'later'], { env: noModel(), timeout: 15_000 })
    expect(create.code).toBe(2)
    expect(resume.code, resume.stdout).toBe(2)
    const firstPart = (s: string) => s.split(' — ')[0]
    expect(firstPart(resume.stderr)).toBe('swarm: no model is configured, so the teammates could not think')
    expect(firstPart(resume.stderr)).toBe(firstPart(create.stderr))
    expect(resume.stderr.trim().split('\n')).toHaveLength(1)
    expect(resume.stderr).toContain('swarm model serve')
    expect(resume.stdout).toBe('')
    // Nothing was started: no leader, no teammate state.
    expect(fs.existsSync(path.join(teamDir('later', sb.env), 'leader.pid'))).toBe(false)
    expect(fs.existsSync(path.join(agentDir('later', 'a', sb.env), 'state.json'))).toBe(false)
  }, 30_000)

  it('is one check: only swarm agents need a model, and a team without teammates still has its lead agent', () => {
    const none = { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' }
    expect(() => assertTeamModel([], none)).toThrow(/no model is configured/)
    expect(() => assertTeamModel([undefined], none)).toThrow(/no model is configured/)
    expect(() => assertTeamModel(['codex', 'swarm'], none)).toThrow(/no model is configured/)
    expect(() => assertTeamModel(['codex', 'gemini'], none)).not.toThrow()
    expect(() => assertTeamModel([undefined], { ANTHROPIC_AUTH_TOKEN: 't' })).not.toThrow()
    expect(() => assertTeamModel([], none, 'write the team only with --no-start')).toThrow(
      expect.objectContaining({ hint: expect.stringMatching(/swarm model serve.*; or write the team only with --no-start$/) }),
    )
  })
})
