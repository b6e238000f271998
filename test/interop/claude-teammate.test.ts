import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO } from '../support/repo.js'
import { waitFor } from '../support/wait.js'
import {
  approveShutdownRule,
  bash,
  claudePane,
  sessionOf,
  type ClaudeSandbox,
  claudeSandbox,
  memberStatus,
  panes,
  requestsMentioning,
  waitForRequest,
} from './claude-harness.js'

/** A real Claude Code process as a teammate of a swarm team: asks, is answered, is stopped. */
describe('Claude Code as a swarm teammate', () => {
  let sb: ClaudeSandbox
  const TEAM = 'crew'

  beforeAll(async () => {
    sb = await claudeSandbox({
      rules: [
        { when: { lastUserIncludes: 'PROBE-APPROVE' }, ...bash('echo approved > approved.txt') },
        { when: { lastUserIncludes: 'PROBE-DENY' }, ...bash('echo denied > denied.txt') },
        { when: { toolResultIncludes: 'not that one' }, times: 1, text: 'Understood, I will not.' },
        { when: { lastUserIncludes: 'PROBE-AFTER' }, text: 'Got the message from before my restart.' },
        approveShutdownRule('cc'),
      ],
      fallback: { text: 'ok.' },
    })
    expect((await sb.swarm(['team', 'create', TEAM, '--no-start', '--cwd', sb.project])).code).toBe(0)
  })
  afterAll(async () => {
    await sb?.close()
  })

  it('spawns with the teammate argv Claude Code uses, its own key (derived from the team key) as --lead-verify-key', async () => {
    const r = await sb.swarm(['spawn', TEAM, 'cc', '--agent', 'claude', '--backend', 'tmux', '--prompt', 'PROBE-APPROVE please'], { timeout: 60_000 })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const pane = panes(sb.env).find((p) => !p.dead && fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('--agent-name'))
    expect(pane).toBeDefined()
    const argv = fs.readFileSync(`/proc/${pane!.pid}/cmdline`, 'utf8').split('\0')
    expect(argv).toEqual(
      expect.arrayContaining(['--agent-id', `cc@${TEAM}`, '--agent-name', 'cc', '--team-name', TEAM, '--permission-mode', 'default']),
    )
    expect(argv[argv.indexOf('--lead-verify-key') + 1]).toMatch(/^\d+\.[\w-]+$/)
    const environ = fs.readFileSync(`/proc/${pane!.pid}/environ`, 'utf8').split('\0')
    expect(environ).toEqual(
      expect.arrayContaining([
        'CLAUDE_CODE_ENABLE_TODO_TOOLS=1',
        'CLAUDE_CODE_DISABLE_AGENT_VIEW=1',
        `CLAUDE_CODE_PROCESS_WRAPPER=${path.join(REPO, 'bin', 'swarm-claude-launcher.js')}`,
      ]),
    )
  })

  it('its Bash request is in `swarm perms` with the bare name; approving it runs the command', async () => {
    const req = await waitForRequest(sb, TEAM, 'cc', () => sb.swarm(['send', TEAM, 'cc', 'PROBE-APPROVE please']))
    expect(req).toMatchObject({ toolName: 'Bash', input: { command: 'echo approved > approved.txt' } })
    expect((await memberStatus(sb, TEAM, 'cc'))?.status).toBe('waiting')
    const r = await sb.swarm(['perms', 'approve', TEAM, req.id])
    expect(r.code).toBe(0)
    await waitFor('approved.txt', () => fs.existsSync(path.join(sb.project, 'approved.txt')), 30_000)
    // No swarm twin answered for it (swarm's agent would have written its pid and model in its state
    // file): the file holds only what its metering proxy counted of Claude Code's own requests.
    const state = JSON.parse(fs.readFileSync(sb.teamFile(TEAM, 'agents', 'cc', 'state.json'), 'utf8')) as Record<string, unknown>
    expect(state).not.toHaveProperty('pid')
    expect(state).not.toHaveProperty('model')
    expect(state.costUsd).toBeGreaterThan(0)
  })

  it('status follows isActive: idle after its turn', async () => {
    await waitFor('cc idle', async () => (await memberStatus(sb, TEAM, 'cc'))?.status === 'idle', 30_000)
  })

  it('a denied request: the command never runs and the model gets the feedback', async () => {
    const ask = () => sb.swarm(['send', TEAM, 'cc', 'PROBE-DENY now'])
    expect((await ask()).code).toBe(0)
    const req = await waitForRequest(sb, TEAM, 'cc', ask)
    expect((await sb.swarm(['perms', 'deny', TEAM, req.id, '--feedback', 'not that one'])).code).toBe(0)
    await waitFor('the feedback reaches the model', () => requestsMentioning(sb.loopback, 'not that one').length > 0, 30_000)
    expect(fs.existsSync(path.join(sb.project, 'denied.txt'))).toBe(false)
    // Answered once: a second answer is a conflict (exit 4), not a silent success.
    expect((await sb.swarm(['perms', 'approve', TEAM, req.id])).code).toBe(4)
  })

  it('swarm kill stops it through the shutdown protocol, not by its timeout', async () => {
    // A long --timeout: the outcome line and the elapsed time show it agreed, not that it was forced.
    const t0 = Date.now()
    const r = await sb.swarm(['kill', TEAM, 'cc', '--timeout', '60000'], { timeout: 90_000 })
    const ms = Date.now() - t0
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('cc agreed to shut down and has stopped')
    expect(ms, 'well before the 60 s timeout').toBeLessThan(30_000)
    expect(requestsMentioning(sb.loopback, 'shutdown_request').length).toBeGreaterThan(0)
    const lead = sb.readJson<Array<{ text: string }>>(sb.teamFile(TEAM, 'inboxes', 'team-lead.json')) ?? []
    expect(lead.some((m) => m.text.includes('"shutdown_approved"'))).toBe(true)
    expect(
      panes(sb.env).some(
        (p) => !p.dead && fs.existsSync(`/proc/${p.pid}/cmdline`) && fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('--agent-name'),
      ),
    ).toBe(false)
  })

  it('team resume --include-stopped continues the conversation of a teammate stopped with swarm kill', async () => {
    const session = sessionOf(sb, TEAM, 'cc')
    expect(session).toBeDefined()
    const plain = await sb.swarm(['team', 'resume', TEAM, '--no-attach', '--json'], { timeout: 60_000 })
    expect(plain.code, plain.stderr).toBe(0)
    expect(JSON.parse(plain.stdout)).toMatchObject({ stopped: ['cc'], respawned: [] })
    const r = await sb.swarm(['team', 'resume', TEAM, '--no-attach', '--include-stopped', '--json'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ restarted: ['cc'], respawned: ['cc'] })
    const pane = await waitFor('its new pane', () => claudePane(sb), 30_000)
    const argv = fs.readFileSync(`/proc/${pane.pid}/cmdline`, 'utf8').split('\0')
    expect(argv[argv.indexOf('--resume') + 1]).toBe(session)
    expect((await sb.swarm(['send', TEAM, 'cc', 'PROBE-AFTER the stop'])).code).toBe(0)
    const seen = await waitFor('the message reaches its model', () => requestsMentioning(sb.loopback, 'PROBE-AFTER the stop')[0], 60_000)
    // The same conversation: what it did before the stop is in the request.
    expect(JSON.stringify(seen)).toContain('echo approved > approved.txt')
    expect((await sb.swarm(['kill', TEAM, 'cc'], { timeout: 30_000 })).code).toBe(0)
    await waitFor('it is gone', () => !claudePane(sb), 30_000)
  })

  it('after a crash, team resume restarts it on its own session (--resume), with the message sent meanwhile', async () => {
    const earlier = sessionOf(sb, TEAM, 'cc')
    expect(
      (await sb.swarm(['spawn', TEAM, 'cc', '--agent', 'claude', '--backend', 'tmux', '--prompt', 'hello again'], { timeout: 60_000 })).code,
    ).toBe(0)
    const pane = await waitFor('its pane', () => claudePane(sb))
    // Its own session: the transcript this run started, newer than the first spawn's.
    const firstSession = await waitFor('its session transcript', () => sessionOf(sb, TEAM, 'cc') !== earlier && sessionOf(sb, TEAM, 'cc'), 30_000)
    await waitFor('cc idle', async () => (await memberStatus(sb, TEAM, 'cc'))?.status === 'idle', 30_000)
    process.kill(pane.pid, 'SIGKILL')
    await waitFor('it is gone', () => !claudePane(sb))
    expect((await sb.swarm(['send', TEAM, 'cc', 'PROBE-AFTER the crash'])).code).toBe(0)
    const r = await sb.swarm(['team', 'resume', TEAM, '--no-attach'], { timeout: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    const again = await waitFor('its new pane', () => claudePane(sb), 30_000)
    const argv = fs.readFileSync(`/proc/${again.pid}/cmdline`, 'utf8').split('\0')
    expect(argv[argv.indexOf('--resume') + 1]).toBe(firstSession)
    await waitFor('the message sent while it was down reaches its model', () => requestsMentioning(sb.loopback, 'PROBE-AFTER').length > 0, 60_000)
  })

  it('swarm tasks add --owner reaches it signed: its model sees a verified task_assignment', async () => {
    const r = await sb.swarm(['tasks', TEAM, 'add', 'PROBE-TASK verify the assignment', '--owner', 'cc', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const seen = await waitFor('the assignment reaches its model', () => requestsMentioning(sb.loopback, 'PROBE-TASK')[0], 60_000)
    const text = JSON.stringify(seen)
    expect(text).toContain('task_assignment')
    expect(text).not.toContain('verified=\\"false\\"')
  })

  it('kill --respect-refusal: a refusal is reported, the teammate left running, exit 4', async () => {
    sb.loopback.setScenario({ rules: [approveShutdownRule('cc', false)], fallback: { text: 'ok.' } })
    const before = await waitFor('its pane', () => claudePane(sb))
    const r = await sb.swarm(['kill', TEAM, 'cc', '--respect-refusal'], { timeout: 30_000 })
    expect(r.code, r.stdout + r.stderr).toBe(4)
    expect(r.stdout + r.stderr).toContain('still busy with the probe')
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(claudePane(sb)?.pid).toBe(before.pid)
  })

  it('a declined shutdown is reported at once with its reason', async () => {
    // From now on cc refuses: the rejecting rule is made to match.
    sb.loopback.setScenario({ rules: [approveShutdownRule('cc', false)], fallback: { text: 'ok.' } })
    const t0 = Date.now()
    const r = await sb.swarm(['kill', TEAM, 'cc', '--timeout', '60000'], { timeout: 90_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('cc refused to shut down (')
    expect(r.stdout).toContain('still busy with the probe')
    expect(Date.now() - t0, 'well before the 60 s timeout').toBeLessThan(30_000)
  })
})
