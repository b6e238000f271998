import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isAlive } from '../../src/process/liveness.js'
import { REPO } from '../support/repo.js'
import { waitFor } from '../support/wait.js'
import {
  bash,
  type ClaudeLead,
  type ClaudeSandbox,
  claudeSandbox,
  claudeTeamName,
  memberStatus,
  requestsMentioning,
  startClaudeLead,
  BYE_ON_SHUTDOWN,
  tool,
} from './claude-harness.js'

/**
 * A team led by a real Claude Code session: it starts a swarm teammate through
 * CLAUDE_CODE_TEAMMATE_COMMAND, swarm inspects and messages the team, a second swarm agent joins
 * with `swarm spawn`; reports reach the Claude Code lead, its permission answers and shutdown
 * orders are obeyed, and swarm refuses to delete the team while the lead lives.
 */
describe('a Claude-Code-led team', () => {
  let sb: ClaudeSandbox
  let lead: ClaudeLead
  let team: string

  beforeAll(async () => {
    sb = await claudeSandbox({
      agents: {
        // swarm agents (they name themselves with the x-swarm-agent header)
        w1: {
          rules: [BYE_ON_SHUTDOWN],
          steps: [
            { when: { lastUserIncludes: 'gather the facts' }, ...tool('Read', { file_path: 'facts.txt' }) },
            tool('SendMessage', { to: 'team-lead', message: 'REPORT-W1: the facts say 42', summary: 'report' }),
            bash('echo w1 > w1-ran.txt', 'write w1-ran.txt'),
            { text: 'Done.' },
          ],
        },
        w2: {
          rules: [BYE_ON_SHUTDOWN],
          steps: [tool('SendMessage', { to: 'team-lead', message: 'REPORT-W2: joined and ready', summary: 'report' }), { text: 'Ready.' }],
        },
      },
      // the Claude Code lead (no agent header)
      rules: [
        {
          when: { lastUserIncludes: 'PROBE-SPAWN' },
          times: 1,
          ...tool('Agent', { description: 'facts worker', prompt: 'gather the facts and report', name: 'w1' }),
        },
        {
          when: { lastUserIncludes: 'PROBE-STOP-W1' },
          times: 1,
          ...tool('SendMessage', { to: 'w1', message: { type: 'shutdown_request', reason: 'work is done' } }),
        },
        {
          when: { lastUserIncludes: 'PROBE-STOP-W2' },
          times: 1,
          ...tool('SendMessage', { to: 'w2', message: { type: 'shutdown_request', reason: 'work is done' } }),
        },
      ],
      fallback: { text: 'ok.' },
    })
    fs.writeFileSync(path.join(sb.project, 'facts.txt'), 'the answer is 42\n')
    lead = startClaudeLead(sb, {
      prompt: 'PROBE-SPAWN a worker',
      env: { CLAUDE_CODE_TEAMMATE_COMMAND: path.join(REPO, 'bin', 'swarm-claude-teammate.js') },
    })
    team = await waitFor('the Claude Code team', () => claudeTeamName(sb), 60_000)
  })
  afterAll(async () => {
    if (process.env.INTEROP_DEBUG && sb && team) {
      process.stderr.write(`--- lead screen\n${lead.screen()}\n`)
      for (const f of fs.readdirSync(sb.teamFile(team, 'inboxes')).filter((n) => n.endsWith('.json')))
        process.stderr.write(`--- ${f}\n${fs.readFileSync(sb.teamFile(team, 'inboxes', f), 'utf8').slice(-3000)}\n`)
      for (const q of sb.loopback.requests)
        process.stderr.write(
          `req ${q.headers['x-swarm-agent'] ?? 'lead'} ${JSON.stringify(q.played)} ${JSON.stringify((q.body as { messages?: unknown[] })?.messages?.at(-1) ?? '').slice(0, 300)}\n`,
        )
      process.stderr.write(`--- config\n${fs.readFileSync(sb.teamFile(team, 'config.json'), 'utf8')}\n`)
      for (const d of ['pending', 'resolved']) {
        const dir = sb.teamFile(team, 'permissions', d)
        if (fs.existsSync(dir))
          for (const f of fs.readdirSync(dir)) process.stderr.write(`--- ${d}/${f}\n${fs.readFileSync(path.join(dir, f), 'utf8')}\n`)
      }
    }
    await sb?.close()
  })

  it('the Claude Code lead starts swarm agent w1 with its teammate argv; w1 reports back to the lead', async () => {
    await waitFor(
      'w1 in the roster',
      () => sb.readJson<{ members: Array<{ name: string }> }>(sb.teamFile(team, 'config.json'))?.members.some((m) => m.name === 'w1'),
      60_000,
    )
    await waitFor(
      "w1's report reaches the Claude Code lead's model",
      () => requestsMentioning(sb.loopback, 'REPORT-W1').some((r) => !(r as { headers: Record<string, string> }).headers?.['x-swarm-agent']),
      60_000,
    )
  })

  it("w1's permission request reaches the Claude Code lead (bare agent_id); its signed answer is obeyed", async () => {
    await waitFor('the permission prompt in the lead', () => lead.screen().includes('w1-ran.txt'), 60_000)
    expect(fs.existsSync(path.join(sb.project, 'w1-ran.txt'))).toBe(false)
    lead.type('')
    await waitFor('w1 ran its command', () => fs.existsSync(path.join(sb.project, 'w1-ran.txt')), 30_000)
    // w1 recorded the answer it acted on: the Claude Code lead's, verified with --lead-verify-key.
    const resolved = fs
      .readdirSync(sb.teamFile(team, 'permissions', 'resolved'))
      .map((f) => sb.readJson<{ agent: string; decision: string; resolvedBy: string }>(sb.teamFile(team, 'permissions', 'resolved', f)))
    expect(resolved).toContainEqual(expect.objectContaining({ agent: 'w1', decision: 'approve' }))
  })

  it('swarm status finds the Claude Code lead alive and w1 on its tmux server', async () => {
    const r = await sb.swarm(['status', team, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const members = JSON.parse(r.stdout).members as Array<{ name: string; status: string }>
    expect(members.find((m) => m.name === 'team-lead')?.status).toBe('alive')
    expect(['idle', 'working', 'alive']).toContain(members.find((m) => m.name === 'w1')?.status)
  })

  it('swarm send writes no swarm key files into the team directory', async () => {
    expect((await sb.swarm(['send', team, 'w1', 'a note from a shell'])).code).toBe(0)
    const files = fs.readdirSync(sb.teamFile(team))
    expect(files.filter((f) => f.startsWith('lead.'))).toEqual([])
    const inbox = sb.readJson<Array<Record<string, unknown>>>(sb.teamFile(team, 'inboxes', 'w1.json')) ?? []
    const note = inbox.find((m) => m.text === 'a note from a shell')
    expect(note).toBeDefined()
    // Not signed: swarm does not hold this lead's key and does not pretend to.
    expect('leadSig' in note! || 'lead_sig' in note!).toBe(false)
  })

  it('a swarm agent joins with swarm spawn: no leader console consumes the lead inbox; its report reaches the lead', async () => {
    const r = await sb.swarm(['spawn', team, 'w2', '--backend', 'tmux', '--prompt', 'say you joined'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    await waitFor(
      "w2's report reaches the Claude Code lead's model",
      () => requestsMentioning(sb.loopback, 'REPORT-W2').some((q) => !(q as { headers: Record<string, string> }).headers?.['x-swarm-agent']),
      60_000,
    )
  })

  it('swarm team delete refuses while the Claude Code lead lives (exit 4) and removes nothing', async () => {
    const r = await sb.swarm(['team', 'delete', team, '--force'])
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/led by a Claude Code session/)
    expect(fs.existsSync(sb.teamFile(team, 'config.json'))).toBe(true)
  })

  it("the lead's shutdown orders are obeyed by both swarm agents", async () => {
    await lead.prompt('PROBE-STOP-W1 now')
    await waitFor(
      'w1 approves',
      () =>
        (sb.readJson<Array<{ from: string; text: string }>>(sb.teamFile(team, 'inboxes', 'team-lead.json')) ?? []).some(
          (m) => m.from === 'w1' && m.text.includes('shutdown_approved'),
        ) || requestsMentioning(sb.loopback, 'shutdown_approved').length > 0,
      60_000,
    )
    await lead.prompt('PROBE-STOP-W2 now')
    await waitFor(
      'w2 exits',
      async () => {
        const st = await memberStatus(sb, team, 'w2')
        return st === undefined || /exited|dead/.test(st.status)
      },
      60_000,
    )
    // A Claude Code lead takes a teammate that approved off its roster; w1's process (pid from its request record) ends.
    const w1 = fs
      .readdirSync(sb.teamFile(team, 'permissions', 'resolved'))
      .map((f) => sb.readJson<{ agent: string; pid?: number }>(sb.teamFile(team, 'permissions', 'resolved', f)))
      .find((r) => r?.agent === 'w1')
    expect(w1?.pid).toBeGreaterThan(0)
    await waitFor('w1 exits', () => !isAlive(w1!.pid!), 30_000)
    await waitFor('w1 off the roster or exited', async () => {
      const st = await memberStatus(sb, team, 'w1')
      return st === undefined || /exited|dead/.test(st.status)
    })
  })
})
