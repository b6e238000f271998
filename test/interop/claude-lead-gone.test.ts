import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claudeLeadAlive, claudeLeadOf, claudeTmuxSocketPath } from '../../src/teams/claude-lead.js'
import type { TeamFile } from '../../src/teams/types.js'
import { waitFor } from '../support/wait.js'
import {
  type ClaudeLead,
  type ClaudeSandbox,
  claudeProcessOf,
  claudeSandbox,
  claudeTeamName,
  memberStatus,
  requestsMentioning,
  startClaudeLead,
  BYE_ON_SHUTDOWN,
  tool,
} from './claude-harness.js'

/**
 * `swarm team delete` of a team whose Claude Code lead is gone (killed): its Claude Code teammate
 * holds that lead's --lead-verify-key and would refuse swarm's unsigned shutdown, so it is ended
 * the way Claude Code ends (SIGTERM) at once; a swarm agent that joined with `swarm spawn` (no
 * key) gets the protocol shutdown. No one waits out the timeout; the report says how each ended.
 */
describe('deleting a Claude-Code-led team after its lead is gone', () => {
  let sb: ClaudeSandbox
  let lead: ClaudeLead
  let team: string

  beforeAll(async () => {
    sb = await claudeSandbox({
      agents: {
        // the swarm agent (it names itself with the x-swarm-agent header)
        w2: {
          rules: [BYE_ON_SHUTDOWN],
          steps: [tool('SendMessage', { to: 'team-lead', message: 'REPORT-W2: joined', summary: 'report' }), { text: 'Ready.' }],
        },
      },
      // the Claude Code lead and its Claude Code teammate (no agent header)
      rules: [
        {
          when: { lastUserIncludes: 'PROBE-SPAWN' },
          times: 1,
          ...tool('Agent', { description: 'a worker', prompt: 'CW-PROMPT say hello', name: 'cw' }),
        },
      ],
      fallback: { text: 'ok.' },
    })
    lead = startClaudeLead(sb, { prompt: 'PROBE-SPAWN a worker' })
    team = await waitFor('the Claude Code team', () => claudeTeamName(sb), 60_000)
  })
  afterAll(async () => {
    await sb?.close()
  })

  it('a Claude Code lead starts a real Claude Code teammate (with its --lead-verify-key); a swarm agent joins', async () => {
    const cw = await waitFor('the Claude Code teammate cw', () => claudeProcessOf(team, 'cw'), 60_000)
    expect(cw.argv[cw.argv.indexOf('--lead-verify-key') + 1]).toMatch(/^\d+\.[\w-]+$/)
    const r = await sb.swarm(['spawn', team, 'w2', '--backend', 'tmux', '--prompt', 'say you joined'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    await waitFor('w2 reported', () => requestsMentioning(sb.loopback, 'REPORT-W2').length > 0, 60_000)
    await waitFor('cw idle', async () => (await memberStatus(sb, team, 'cw'))?.status === 'idle', 60_000)
  })

  it('team delete after the lead is killed: cw ends on SIGTERM, w2 by the protocol, well inside the timeout', async () => {
    const config = sb.readJson<TeamFile>(sb.teamFile(team, 'config.json'))!
    const leadInfo = claudeLeadOf(config)!
    process.kill(leadInfo.pid, 'SIGKILL')
    await waitFor('the lead is gone', () => !claudeLeadAlive(leadInfo), 10_000)
    const cw = claudeProcessOf(team, 'cw')
    expect(cw, 'cw outlives its lead').toBeDefined()
    const socket = claudeTmuxSocketPath(leadInfo, sb.env)
    expect(fs.lstatSync(socket).isSocket(), 'its claude-swarm-<pid> server').toBe(true)
    const t0 = Date.now()
    const r = await sb.swarm(['team', 'delete', team, '--timeout', '20', '--json'], { timeout: 60_000 })
    const ms = Date.now() - t0
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout) as { exited: string[]; signalled: string[]; killed: string[]; tmuxSocketRemoved?: string }
    expect(report).toMatchObject({ exited: ['w2'], signalled: ['cw'], killed: [] })
    // Its teammates ended, the lead's own tmux server exited: the socket file it left is gone too.
    expect(report.tmuxSocketRemoved).toBe(socket)
    expect(fs.existsSync(socket)).toBe(false)
    // Not the 20 s timeout: cw is never asked with a shutdown it would refuse.
    expect(ms, 'well before the 20 s timeout').toBeLessThan(15_000)
    expect(claudeProcessOf(team, 'cw')).toBeUndefined()
    // Its pane's tmux server reaps it a moment later (until then /proc keeps the zombie).
    await waitFor('cw reaped', () => !fs.existsSync(`/proc/${cw!.pid}`), 15_000)
    expect(fs.existsSync(sb.teamFile(team, 'config.json'))).toBe(false)
    const text = await sb.swarm(['team', 'list'])
    expect(text.stdout).not.toContain(team)
    void lead
  })
})
