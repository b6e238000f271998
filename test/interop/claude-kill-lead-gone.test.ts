import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STOPPED_FIELD } from '../../src/backends/directory.js'
import { claudeLeadAlive, claudeLeadOf } from '../../src/teams/claude-lead.js'
import type { TeamFile } from '../../src/teams/types.js'
import { waitFor } from '../support/wait.js'
import { type ClaudeSandbox, claudeProcessOf, claudeSandbox, claudeTeamName, memberStatus, startClaudeLead, tool } from './claude-harness.js'

/**
 * `swarm kill <team> <name>` of a real Claude Code teammate whose Claude Code lead is gone: it
 * holds that lead's --lead-verify-key and would call swarm's unsigned shutdown_request forged, so
 * it is not asked (and its timeout not waited out) but ended with SIGTERM, as `team delete` does.
 */
describe("killing a gone Claude Code lead's Claude Code teammate", () => {
  let sb: ClaudeSandbox
  let team: string

  beforeAll(async () => {
    sb = await claudeSandbox({
      rules: [
        {
          when: { lastUserIncludes: 'PROBE-SPAWN' },
          times: 1,
          ...tool('Agent', { description: 'a worker', prompt: 'CW-PROMPT say hello', name: 'cw' }),
        },
      ],
      fallback: { text: 'ok.' },
    })
    startClaudeLead(sb, { prompt: 'PROBE-SPAWN a worker' })
    team = await waitFor('the Claude Code team', () => claudeTeamName(sb), 60_000)
  })
  afterAll(async () => {
    await sb?.close()
  })

  it('ends it with SIGTERM at once (outcome signalled), well inside --timeout, and marks it stopped', async () => {
    const cw = await waitFor('the Claude Code teammate cw', () => claudeProcessOf(team, 'cw'), 60_000)
    expect(cw.argv[cw.argv.indexOf('--lead-verify-key') + 1]).toMatch(/^\d+\.[\w-]+$/)
    await waitFor('cw idle', async () => (await memberStatus(sb, team, 'cw'))?.status === 'idle', 60_000)
    const leadInfo = claudeLeadOf(sb.readJson<TeamFile>(sb.teamFile(team, 'config.json'))!)!
    process.kill(leadInfo.pid, 'SIGKILL')
    await waitFor('the lead is gone', () => !claudeLeadAlive(leadInfo), 10_000)
    expect(claudeProcessOf(team, 'cw'), 'cw outlives its lead').toBeDefined()

    const t0 = Date.now()
    const r = await sb.swarm(['kill', team, 'cw', '--timeout', '20000', '--json'], { timeout: 60_000 })
    const ms = Date.now() - t0
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ team, name: 'cw', outcome: 'signalled' })
    // Not the 20 s timeout: cw is never sent a shutdown it would refuse as forged.
    expect(ms, 'well before the 20 s timeout').toBeLessThan(15_000)
    expect(claudeProcessOf(team, 'cw')).toBeUndefined()
    // Its pane's tmux server reaps it a moment later (until then /proc keeps the zombie).
    await waitFor('cw reaped', () => !fs.existsSync(`/proc/${cw.pid}`), 15_000)
    const member = sb.readJson<TeamFile>(sb.teamFile(team, 'config.json'))!.members.find((m) => m.name === 'cw')!
    expect(member.isActive).toBe(false)
    expect(member[STOPPED_FIELD]).toBe(true)
  })
})
