import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { ancestors, bash, type ClaudeSandbox, claudeProcessOf, claudeSandbox, tool, waitForRequest } from './claude-harness.js'

/**
 * A Claude Code teammate swarm starts runs in swarm's sandbox itself (through the launcher its
 * self-spawns use), so an in-process subagent — which runs in its parent's process — is confined
 * too: its Bash writes in the project, not outside, reads neither its own team's nor another team's
 * lead.key, sees no other team, and cannot write swarm's records; the team protocol still works.
 */
describe("a swarm-started Claude Code teammate and its subagents in swarm's sandbox", () => {
  let sb: ClaudeSandbox
  const TEAM = 'boxed'
  let outside: string

  beforeAll(async () => {
    sb = await claudeSandbox({ rules: [], fallback: { text: 'ok.' } })
    expect((await sb.swarm(['team', 'create', 'guarded', '--no-start', '--cwd', sb.project])).code).toBe(0)
    expect((await sb.swarm(['team', 'create', TEAM, '--no-start', '--cwd', sb.project])).code).toBe(0)
    // Both teams have their key pair once something was signed for them.
    expect((await sb.swarm(['send', 'guarded', 'team-lead', 'hello'])).code).toBe(0)
    const other = sb.teamFile('guarded', 'lead.key')
    const own = sb.teamFile(TEAM, 'lead.key')
    outside = path.join(sb.root, 'outside')
    fs.mkdirSync(outside)
    const teams = path.dirname(sb.teamFile(TEAM))
    const probe = [
      `cat ${other} ${own} > leaked.txt`,
      `ls ${teams} > teams.txt`,
      `echo forged > ${sb.teamFile(TEAM, 'permissions')}/forged.json`,
      `echo out > ${outside}/out.txt`,
      // Its shell's `swarm` reaches the team through its relay: a message, not the permission queue.
      `swarm send ${TEAM} team-lead SHELL-HELLO > send.txt 2>&1`,
      `swarm perms ${TEAM} > perms.txt 2>&1`,
      'echo in > inside.txt',
    ].join('; ')
    sb.loopback.setScenario({
      rules: [
        {
          when: { lastUserIncludes: 'PROBE-SUB' },
          times: 1,
          ...tool('Agent', { description: 'probe worker', prompt: 'PROBE-INNER run the probe', subagent_type: 'general-purpose' }),
        },
        { when: { lastUserIncludes: 'PROBE-INNER' }, times: 1, ...bash(`${probe}; true`, 'probe the sandbox') },
      ],
      fallback: { text: 'ok.' },
    })
  })
  afterAll(async () => {
    await sb?.close()
  })

  it('the teammate process runs under bubblewrap', async () => {
    const r = await sb.swarm(['spawn', TEAM, 'cc', '--agent', 'claude', '--backend', 'tmux', '--prompt', 'PROBE-SUB start a subagent'], {
      timeout: 60_000,
    })
    expect(r.code, r.stderr).toBe(0)
    const cc = await waitFor('the teammate process', () => claudeProcessOf(TEAM, 'cc'), 60_000)
    expect(ancestors(cc.pid)).toContain('bwrap')
  })

  it("its subagent's Bash: writes in the project only, no lead.key, no other team, no swarm record", async () => {
    const req = await waitForRequest(sb, TEAM, 'cc')
    expect(req).toMatchObject({ toolName: 'Bash' })
    expect((await sb.swarm(['perms', 'approve', TEAM, req.id])).code).toBe(0)
    await waitFor('the command ran', () => fs.existsSync(path.join(sb.project, 'inside.txt')), 60_000)
    for (const team of ['guarded', TEAM]) expect(fs.readFileSync(sb.teamFile(team, 'lead.key'), 'utf8').length).toBeGreaterThan(0)
    expect(fs.readFileSync(path.join(sb.project, 'leaked.txt'), 'utf8')).toBe('')
    expect(fs.readFileSync(path.join(sb.project, 'teams.txt'), 'utf8').trim()).toBe(TEAM)
    expect(fs.existsSync(sb.teamFile(TEAM, 'permissions', 'forged.json'))).toBe(false)
    expect(fs.existsSync(path.join(outside, 'out.txt'))).toBe(false)
    const inbox = sb.readJson<Array<{ from: string; text: string }>>(sb.teamFile(TEAM, 'inboxes', 'team-lead.json')) ?? []
    expect(
      inbox.some((m) => m.from === 'cc' && m.text === 'SHELL-HELLO'),
      fs.readFileSync(path.join(sb.project, 'send.txt'), 'utf8'),
    ).toBe(true)
    expect(fs.readFileSync(path.join(sb.project, 'perms.txt'), 'utf8')).toContain('is not available to a teammate')
  })
})
